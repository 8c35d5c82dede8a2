// SPDX-License-Identifier: GPL-3.0-or-later
#include "imageops.h"

#include <algorithm>
#include <cstdlib>

namespace orrery::media {

QImage absoluteDifference(const QImage &aIn, const QImage &bIn)
{
    if (aIn.isNull() || bIn.isNull())
        return {};
    const QImage a = aIn.convertToFormat(QImage::Format_RGB32);
    QImage b = bIn.convertToFormat(QImage::Format_RGB32);
    if (b.size() != a.size())
        b = b.scaled(a.size(), Qt::IgnoreAspectRatio, Qt::FastTransformation);
    QImage out(a.size(), QImage::Format_RGB32);
    for (int y = 0; y < a.height(); ++y) {
        const auto *pa = reinterpret_cast<const QRgb *>(a.constScanLine(y));
        const auto *pb = reinterpret_cast<const QRgb *>(b.constScanLine(y));
        auto *po = reinterpret_cast<QRgb *>(out.scanLine(y));
        for (int x = 0; x < a.width(); ++x)
            po[x] = qRgb(std::abs(qRed(pa[x]) - qRed(pb[x])), std::abs(qGreen(pa[x]) - qGreen(pb[x])),
                         std::abs(qBlue(pa[x]) - qBlue(pb[x])));
    }
    return out;
}

QRect fitRect(QSize image, const QRect &area)
{
    if (image.isEmpty() || area.isEmpty())
        return {};
    QSize size;
    const int whole = std::min(area.width() / image.width(), area.height() / image.height());
    if (whole >= 1)
        size = image * whole;
    else
        size = image.scaled(area.size(), Qt::KeepAspectRatio);
    return QRect(area.x() + (area.width() - size.width()) / 2, area.y() + (area.height() - size.height()) / 2,
                 size.width(), size.height());
}

}  // namespace orrery::media
