// SPDX-License-Identifier: GPL-3.0-or-later
//
// Log text as a person may see it: a log is untrusted bytes (a training script's, a cluster's).
// The GUI's log windows and the Details dock's stderr tail show nothing else.
#pragma once

#include <QByteArrayView>
#include <QString>

namespace orrery::appcommon {

// Log bytes made safe to show as plain text, one output line per input line ('\n'):
// - invalid UTF-8 becomes U+FFFD (the replacement character);
// - carriage returns: a line keeps what follows its last '\r' (a progress bar's final state;
//   a trailing "\r" or "\r\n" ends the line without erasing it);
// - tabs are kept;
// - ANSI escape sequences vanish: CSI (ESC [ or the C1 CSI U+009B, then parameters and a final
//   byte: colours, cursor moves), OSC (ESC ] ... BEL or ESC \: titles, links) and the short
//   ESC forms (ESC ( B);
// - every other C0 control and DEL is shown as its Unicode control picture (BEL as "␇", a
//   stray ESC as "␛", NUL as "␀", DEL as "␡"), every other C1 control (U+0080..U+009F) and the
//   characters that would reorder or break lines in the view (bidi overrides and isolates,
//   U+2028, U+2029) as U+FFFD.
// Pure: the same bytes give the same text.
QString safeLogText(QByteArrayView bytes);

}  // namespace orrery::appcommon
