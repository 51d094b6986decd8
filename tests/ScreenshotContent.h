#pragma once
// What a screenshot test asserts about the picture itself: that something was drawn (many
// colours, no single colour covering nearly all of it), not the size the test chose.
#include <QHash>
#include <QImage>
#include <QString>
#include <algorithm>

namespace passlens::test {

/// An empty string when `image` looks drawn; otherwise why not ("only 3 colours", "one colour
/// covers 99% of it"). Samples every third pixel in each direction.
inline QString whyNotDrawn(const QImage& image, int minColors = 12, double maxShare = 0.97) {
    if (image.isNull() || image.width() == 0 || image.height() == 0) return "no image";
    QHash<QRgb, int> counts;
    int samples = 0;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3, ++samples) ++counts[image.pixel(x, y)];
    if (counts.size() < minColors) return QString("only %1 colours").arg(counts.size());
    int top = 0;
    for (int c : counts) top = std::max(top, c);
    if (top > maxShare * samples) return QString("one colour covers %1% of it").arg(100.0 * top / samples, 0, 'f', 1);
    return {};
}

}  // namespace passlens::test

/// QVERIFY that the image at `path` (or a QImage) looks drawn, with the reason on failure.
#define PASSLENS_VERIFY_DRAWN(image)                                               \
    do {                                                                           \
        const QString why_ = passlens::test::whyNotDrawn(QImage(image));           \
        QVERIFY2(why_.isEmpty(), qPrintable(why_));                                \
    } while (false)
