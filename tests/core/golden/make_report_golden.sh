#!/bin/sh
# Writes tests/core/golden/optimize_reports.txt from reports that a reference passlens-cli (main's,
# before a restructuring) writes for the five real models and every teaching example.
#   make_report_golden.sh REFERENCE_PASSLENS_CLI PASSLENS_CORE_TESTS
# The test binary first exports the examples (build/tests/tmp/report_golden_models), then turns
# the reference reports into per-pass digests.
set -eu
cli=$1
tests=$2
build=$(dirname "$(dirname "$tests")")  # the test binary sits in BUILD/bin
tmp=$build/tests/tmp
"$tests" --gtest_filter=ReportGolden.OptimizeReportsMatchMainBeforeTheRestructuring >/dev/null 2>&1 || true
models=$build/models
reports=$tmp/report_golden_reports
mkdir -p "$reports"
for f in "$models"/*.onnx "$tmp"/report_golden_models/*.onnx; do
  name=$(basename "$f" .onnx)
  for level in basic extended all; do
    "$cli" optimize "$f" -o "$reports/out.onnx" --level $level --report "$reports/$name.$level.json" >/dev/null
  done
  "$cli" optimize "$f" -o "$reports/out.onnx" --level extended --fixed-point \
    --report "$reports/$name.extended+fixed-point.json" >/dev/null
done
PASSLENS_REPORT_GOLDEN_FROM=$reports "$tests" --gtest_filter=ReportGolden.OptimizeReportsMatchMainBeforeTheRestructuring
