// SPDX-License-Identifier: GPL-3.0-or-later
#include "reviewchoosers.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>

#include <algorithm>
#include <utility>

namespace orrery::gui {

ReviewChoosers::ReviewChoosers(QWidget *view) : QObject(view), m_view(view)
{ }

QHBoxLayout *ReviewChoosers::build()
{
    auto *review = new QHBoxLayout;
    auto chooser = [this, review](const QString &label, const QString &name, const QString &tip) {
        auto *l = new QLabel(label, m_view);
        auto *box = new QComboBox(m_view);
        box->setObjectName(name);
        box->setToolTip(tip);
        // A fixed width: run names are as long as users make them, and a box that grew to fit one
        // made the window wider than the screen.
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(9);
        l->setBuddy(box);
        review->addWidget(l);
        review->addWidget(box);
        return box;
    };
    m_aBox = chooser(tr("A"), QStringLiteral("videoA"), tr("The run shown as A (left of the divider)"));
    m_bBox = chooser(tr("B"), QStringLiteral("videoB"), tr("The run shown as B (right of the divider)"));
    m_refBox = chooser(tr("Reference"), QStringLiteral("videoReference"),
                       tr("Each tile's PSNR and SSIM against this run's sample at the same step"));
    m_orderBox = chooser(tr("Order"), QStringLiteral("videoOrder"),
                         tr("The baseline run first, then the tiles in this order"));
    m_orderBox->addItems(
        {tr("selection"), tr("sweep metric"), tr("PSNR to reference"), tr("SSIM to reference"), tr("name")});
    connect(m_orderBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { Q_EMIT orderChosen(static_cast<TileOrder>(i)); });
    m_keyBox = chooser(tr("Samples"), QStringLiteral("videoKey"),
                       tr("Which of the runs' videos or images to show (each series they log)"));
    connect(m_keyBox, &QComboBox::currentIndexChanged, this,
            [this] { Q_EMIT mediaKeyChosen(m_keyBox->currentData().toString()); });
    auto runChosen = [](QComboBox *box) { return box->currentData().value<core::RunId>(); };
    connect(m_aBox, &QComboBox::currentIndexChanged, this,
            [this, runChosen] { Q_EMIT aChosen(runChosen(m_aBox)); });
    connect(m_bBox, &QComboBox::currentIndexChanged, this,
            [this, runChosen] { Q_EMIT bChosen(runChosen(m_bBox)); });
    connect(m_refBox, &QComboBox::currentIndexChanged, this,
            [this, runChosen] { Q_EMIT referenceChosen(runChosen(m_refBox)); });
    return review;
}

void ReviewChoosers::showRuns(const VideoState &state)
{
    // Refilled only when the runs changed: the boxes call this from their own signals.
    auto fill = [&state](QComboBox *box, core::RunId chosen, const QString &none, bool withReference) {
        QList<std::pair<QString, core::RunId>> items{{none, 0}};
        for (const RunSamples &r : std::as_const(state.runs))
            items.push_back({r.name, r.run});
        if (withReference && state.referenceRun)
            items.push_back({state.referenceRun->name, state.referenceRun->run});
        const QSignalBlocker block(box);
        bool same = box->count() == items.size();
        for (int i = 0; same && i < box->count(); ++i)
            same = box->itemData(i).value<core::RunId>() == items[i].second;
        if (!same) {
            box->clear();
            for (const auto &[name, run] : items)
                box->addItem(name, QVariant::fromValue<core::RunId>(run));
        }
        box->setCurrentIndex(std::max(0, box->findData(QVariant::fromValue<core::RunId>(chosen))));
    };
    fill(m_aBox, state.a, tr("first"), false);
    fill(m_bBox, state.b, tr("second"), false);
    fill(m_refBox, state.reference, tr("none"), true);
}

void ReviewChoosers::showOrder(TileOrder order)
{
    const QSignalBlocker block(m_orderBox);
    m_orderBox->setCurrentIndex(int(order));
}

void ReviewChoosers::showMediaKeys(const QStringList &keys, const QString &key)
{
    const QSignalBlocker block(m_keyBox);
    m_keyBox->clear();
    for (const QString &k : keys)
        m_keyBox->addItem(k, k);
    m_keyBox->setCurrentIndex(std::max<int>(0, int(keys.indexOf(key))));
    m_keyBox->setEnabled(keys.size() > 1);
}

}  // namespace orrery::gui
