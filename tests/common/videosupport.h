// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Shared by the Video tab's tests: a VideoView over a database, shown offscreen, as the main
// window builds it (its store reader and the shared selection).

#include "clusterhub.h"
#include "runselection.h"
#include "samplefetcher.h"
#include "storereader.h"
#include "storewriter.h"
#include "videoview.h"

#include <QSignalSpy>

namespace orrery::test {

struct VideoHarness {
    gui::StoreWriter writer;  // where fetched copies are recorded, as in the window
    gui::StoreReader reader;
    gui::RunSelection selection;
    gui::ClusterHub hub{nullptr};  // connections as the window makes them, with no one to ask
    gui::VideoView view{&reader, &selection};

    explicit VideoHarness(const QString &database, QSize size = {900, 600})
    {
        view.fetcher()->setConnectionSource(hub.namedConnectionSource());
        view.fetcher()->setWriter(&writer);
        writer.open(database);
        reader.open(database);
        view.resize(size);
        view.show();
    }
    // Selects `runs` and waits until the view shows their samples (false: it did not in 10 s).
    bool select(const QList<core::RunId> &runs)
    {
        QSignalSpy shown(&view, &gui::VideoView::samplesShown);
        selection.select(runs, nullptr);
        return shown.wait(10'000);
    }
};

}  // namespace orrery::test
