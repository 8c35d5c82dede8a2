// SPDX-License-Identifier: GPL-3.0-or-later
//
// A metric's curve as one line of text, for the terminal monitor. Pure: values in, a string out.
#pragma once

#include <QString>

#include <span>

namespace orrery::monitor {

// Unicode: the eight block elements ▁▂▃▄▅▆▇█ (one terminal cell each). Ascii: `_.-~=+*#`, for a
// terminal whose locale is not UTF-8 (a vt100, LANG=C over SSH).
enum class Glyphs { Unicode, Ascii };

// One character per column, at most `width` columns: with more values than columns, each column
// shows the mean of its share of the values (in order); with fewer, one column per value. The
// lowest finite value is the lowest glyph and the highest the highest; a flat series sits in the
// middle. NaN and ±inf are drawn as a space and do not take part in the scale.
QString sparkline(std::span<const double> values, int width, Glyphs glyphs);

}  // namespace orrery::monitor
