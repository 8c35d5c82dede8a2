// SPDX-License-Identifier: GPL-3.0-or-later
#include "columnchooser.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QScopedValueRollback>
#include <QTreeView>
#include <QVBoxLayout>

namespace orrery::gui {

namespace {
// A prefix group's box says how many of its columns are shown: all, some, none.
void updateGroupCheck(QStandardItem *group)
{
    int shown = 0;
    for (int r = 0; r < group->rowCount(); ++r)
        shown += group->child(r)->checkState() == Qt::Checked;
    group->setCheckState(shown == 0                       ? Qt::Unchecked
                             : shown == group->rowCount() ? Qt::Checked
                                                          : Qt::PartiallyChecked);
}
}  // namespace

ColumnChooser::ColumnChooser(QWidget *parent)
    : QWidget(parent), m_search(new QLineEdit(this)), m_tree(new QTreeView(this))
{
    setObjectName(QStringLiteral("columnChooser"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_search->setObjectName(QStringLiteral("columnSearch"));
    m_search->setPlaceholderText(tr("Search columns"));
    m_search->setClearButtonEnabled(true);
    layout->addWidget(m_search);
    m_tree->setModel(&m_model);
    m_tree->setHeaderHidden(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(m_tree, 1);
    resize(320, 440);
    connect(m_search, &QLineEdit::textChanged, this, &ColumnChooser::filter);
    connect(&m_model, &QStandardItemModel::itemChanged, this, &ColumnChooser::changed);
}

QString ColumnChooser::prefixOf(const QString &name, QChar separator)
{
    const qsizetype i = name.indexOf(separator);
    return i > 0 ? name.left(i + 1) : QString();
}

void ColumnChooser::setColumns(const QList<Column> &columns)
{
    const QScopedValueRollback guard(m_updating, true);
    m_model.clear();
    m_items.clear();
    auto *run = new QStandardItem(tr("Run"));
    auto *params = new QStandardItem(tr("Params"));
    auto *metrics = new QStandardItem(tr("Metrics"));
    QHash<QString, QStandardItem *> groups;  // "param:optim." -> its item
    auto groupFor = [&](QStandardItem *top, const QString &id, const QString &label) {
        QStandardItem *&g = groups[id];
        if (!g) {
            g = new QStandardItem(label);
            g->setCheckable(true);
            top->appendRow(g);
        }
        return g;
    };
    for (const Column &c : columns) {
        QStandardItem *parent = run;
        QString label = c.label;
        if (c.key.startsWith(QLatin1String("param:"))) {
            const QString name = c.key.mid(6), prefix = prefixOf(name, QLatin1Char('.'));
            parent = prefix.isEmpty() ? params : groupFor(params, QLatin1String("param:") + prefix, prefix);
            label = name;
        } else if (c.key.startsWith(QLatin1String("metric:"))) {
            const QString name = c.key.mid(7), prefix = prefixOf(name, QLatin1Char('/'));
            parent =
                prefix.isEmpty() ? metrics : groupFor(metrics, QLatin1String("metric:") + prefix, prefix);
            label = name;
        }
        auto *item = new QStandardItem(label);
        item->setCheckable(true);
        item->setCheckState(c.shown ? Qt::Checked : Qt::Unchecked);
        item->setData(c.key, KeyRole);
        item->setToolTip(label);
        parent->appendRow(item);
        m_items.insert(c.key, item);
    }
    for (QStandardItem *top : {run, params, metrics}) {
        m_model.appendRow(top);
        top->setText(QStringLiteral("%1 (%2)").arg(top->text()).arg(top->rowCount()));
    }
    // Each prefix group says how many of its columns are shown (checked, partly, none).
    for (QStandardItem *g : std::as_const(groups)) {
        updateGroupCheck(g);
        g->setText(QStringLiteral("%1 (%2)").arg(g->text()).arg(g->rowCount()));
    }
    m_tree->expand(run->index());
    m_tree->expand(params->index());
    m_tree->expand(metrics->index());
    filter();
}

QStandardItem *ColumnChooser::item(const QString &key) const
{
    return m_items.value(key);
}

QStandardItem *ColumnChooser::groupOf(const QString &key) const
{
    QStandardItem *i = item(key);
    return i ? i->parent() : nullptr;
}

bool ColumnChooser::isShown(const QString &key) const
{
    const QStandardItem *i = item(key);
    return i && i->checkState() == Qt::Checked;
}

void ColumnChooser::setShown(const QString &key, bool shown)
{
    if (QStandardItem *i = item(key))
        i->setCheckState(shown ? Qt::Checked : Qt::Unchecked);  // itemChanged → changed()
}

void ColumnChooser::setSearch(const QString &text)
{
    m_search->setText(text);
}

void ColumnChooser::changed(QStandardItem *item)
{
    if (m_updating)
        return;
    const QScopedValueRollback guard(m_updating, true);
    const QString key = item->data(KeyRole).toString();
    if (key.isEmpty()) {  // a group: all of its columns
        if (item->checkState() == Qt::PartiallyChecked)
            return;
        const bool on = item->checkState() == Qt::Checked;
        for (int r = 0; r < item->rowCount(); ++r) {
            QStandardItem *c = item->child(r);
            if ((c->checkState() == Qt::Checked) != on) {
                c->setCheckState(on ? Qt::Checked : Qt::Unchecked);
                Q_EMIT columnToggled(c->data(KeyRole).toString(), on);
            }
        }
        return;
    }
    Q_EMIT columnToggled(key, item->checkState() == Qt::Checked);
    if (QStandardItem *g = item->parent(); g && g->isCheckable())
        updateGroupCheck(g);
}

void ColumnChooser::filter()
{
    const QString text = m_search->text().trimmed();
    // A group is in sight when one of its columns matches, or its own name does.
    auto visit = [&](auto &&self, QStandardItem *parent, bool parentMatches) -> bool {
        bool any = false;
        for (int r = 0; r < parent->rowCount(); ++r) {
            QStandardItem *c = parent->child(r);
            const bool own = text.isEmpty() || parentMatches || c->text().contains(text, Qt::CaseInsensitive);
            const bool children =
                c->hasChildren() && self(self, c, c->isCheckable() && own && !text.isEmpty());
            const bool visible = own || children;
            m_tree->setRowHidden(r, parent->index(), !visible);
            if (children && !text.isEmpty())
                m_tree->expand(c->index());
            any = any || visible;
        }
        return any;
    };
    visit(visit, m_model.invisibleRootItem(), false);
}

}  // namespace orrery::gui
