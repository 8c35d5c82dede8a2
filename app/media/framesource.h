// SPDX-License-Identifier: GPL-3.0-or-later
//
// One clip decoding ahead of a playhead on a thread of its own, into a bounded frame cache.
//
// The UI thread moves the playhead (setPlayhead) and reads frames that are ready (frame());
// the worker keeps the window [playhead - behind, playhead + ahead) decoded, wrapping at the end
// when looping, and evicts what falls outside it. The window holds at most budgetBytes of frames,
// so a clip that fits (every trainer sample does: 8 frames of 128x512 are 2 MiB) is decoded once
// and then loops without decoding; a long clip decodes as it plays. frameReady() fires on the
// owner's thread when the frame at the playhead arrives (a paused view repaints then).
//
// Thread-safety: every public member may be called from the owner's thread; frame(), info(),
// state() and error() from any. The destructor stops the worker and waits for it.
#pragma once

#include "clipdecoder.h"

#include <QImage>
#include <QObject>
#include <QString>

#include <memory>

namespace orrery::media {

class FrameSource : public QObject {
    Q_OBJECT
public:
    enum class State { Opening, Ready, Failed };
    // 48 MiB: 192 frames of 256x256, the whole of any sample clip the trainer writes.
    static constexpr qint64 kDefaultBudget = qint64(48) << 20;

    explicit FrameSource(const QString &path, qint64 budgetBytes = kDefaultBudget, QObject *parent = nullptr);
    ~FrameSource() override;

    QString path() const;
    State state() const;
    ClipInfo info() const;  // valid once Ready
    QString error() const;  // why it Failed, or the last damaged frame's message
    // How many frames the window holds (all of them when the clip fits the budget).
    int capacity() const;

    // Frame `index` if it is decoded, else a null image.
    QImage frame(int index) const;
    // True when frame `index` could not be decoded (a damaged file): do not wait for it.
    bool isDamaged(int index) const;
    // Where playback stands; the worker decodes from here on.
    void setPlayhead(int index, bool loop = true);
    // Frames decoded so far (benchmarks: a looping clip that fits stops decoding).
    qint64 decodedCount() const;

Q_SIGNALS:
    void opened();  // info() is valid
    void failed(const QString &message);
    void frameReady(int index);  // the frame at the playhead is decoded

private:
    struct Worker;
    std::unique_ptr<Worker> d;
};

}  // namespace orrery::media
