// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Video tab's review choosers, on a row of their own (beside the transport they made the tab
// wider than the window): the runs shown as A and B, the reference run, the tiles' order and
// the series of samples shown. A choice in a box comes out as a signal; the show* calls set the
// boxes from the view's state without emitting. The boxes are the view's children, as are the
// choosers. UI thread only.
#pragma once

#include "videostate.h"

#include <QObject>

class QComboBox;
class QHBoxLayout;
class QWidget;

namespace orrery::gui {

class ReviewChoosers : public QObject {
    Q_OBJECT
public:
    explicit ReviewChoosers(QWidget *view);

    // The row: A, B, Reference, Order and Samples, each a labelled box ("videoA", "videoB",
    // "videoReference", "videoOrder", "videoKey").
    QHBoxLayout *build();
    // A, B and the reference: "none" and the shown runs (and the reference run for the
    // reference), refilled only when the runs changed; the state's chosen.
    void showRuns(const VideoState &state);
    void showOrder(TileOrder order);
    // The series the runs have; `key` chosen; a choice only when there are several.
    void showMediaKeys(const QStringList &keys, const QString &key);

Q_SIGNALS:
    void aChosen(core::RunId run);
    void bChosen(core::RunId run);
    void referenceChosen(core::RunId run);
    void orderChosen(TileOrder order);
    void mediaKeyChosen(const QString &key);

private:
    QWidget *m_view;
    QComboBox *m_aBox = nullptr, *m_bBox = nullptr, *m_refBox = nullptr, *m_orderBox = nullptr;
    QComboBox *m_keyBox = nullptr;
};

}  // namespace orrery::gui
