"""Executes docs/notebooks/tour.ipynb headless (jupyter nbconvert --execute) and checks that it ran
end to end and that its outputs contain the inline drawings (SVG).

    check_notebook.py NOTEBOOK OUT_DIR [MIN_DRAWINGS]
"""
import json
import pathlib
import subprocess
import sys
import time


def main():
    notebook, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    min_drawings = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / (notebook.stem + ".executed.ipynb")
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                    "--ExecutePreprocessor.timeout=120", "--output-dir", str(out_dir),
                    "--output", executed.name, str(notebook)], check=True)
    seconds = time.monotonic() - t0
    nb = json.loads(executed.read_text())
    drawings, errors, code_cells = 0, [], 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        code_cells += 1
        if cell.get("execution_count") is None:
            errors.append("a code cell did not run: %s" % "".join(cell["source"])[:60])
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append("%s: %s" % (out.get("ename"), out.get("evalue")))
            data = out.get("data", {})
            svg = "".join(data.get("image/svg+xml", ""))
            html = "".join(data.get("text/html", ""))
            drawings += ("<svg" in svg) + html.count("<svg")
    if errors:
        sys.exit("notebook failed:\n  " + "\n  ".join(errors))
    if drawings < min_drawings:
        sys.exit("notebook outputs hold %d inline SVG drawings, expected at least %d" % (drawings, min_drawings))
    print("notebook ok: %d code cells, %d inline SVG drawings, %.1f s -> %s" % (code_cells, drawings, seconds, executed))


if __name__ == "__main__":
    main()
