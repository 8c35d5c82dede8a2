// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Runs table's column chooser (its header's context menu, and the Columns button): every
// column the table can show, checkable, params grouped by their prefix (optim., model., train.,
// cfg. ...) and metrics by theirs (train/, eval/ ...) under "Params" and "Metrics", with a search
// box that keeps the matching columns (and their groups) in sight. Checking a group checks its
// columns. It only says what the user chose (columnToggled); the window decides what is shown
// and saves it.
#pragma once

#include <QStandardItemModel>
#include <QWidget>

class QLineEdit;
class QTreeView;

namespace orrery::gui {

class ColumnChooser : public QWidget {
    Q_OBJECT
public:
    enum Role { KeyRole = Qt::UserRole + 1 };  // a column's RunsTableModel::columnKey; none for a group
    struct Column {
        QString key;  // RunsTableModel::columnKey
        QString label;
        bool shown = false;
    };

    explicit ColumnChooser(QWidget *parent = nullptr);

    // Replaces the list (a new table shape); keeps the search.
    void setColumns(const QList<Column> &columns);
    // As a click on the column's box would (emits columnToggled when it changes).
    void setShown(const QString &key, bool shown);
    bool isShown(const QString &key) const;
    void setSearch(const QString &text);

    QLineEdit *searchEdit() const { return m_search; }
    QTreeView *tree() const { return m_tree; }
    QStandardItemModel *model() { return &m_model; }
    // The group item a key falls under ("optim.", "eval/", "Run"), or nullptr.
    QStandardItem *groupOf(const QString &key) const;
    // The prefix group of a param or metric name: "optim." of optim.lr, "eval/" of eval/loss, ""
    // for one without a prefix.
    static QString prefixOf(const QString &name, QChar separator);

Q_SIGNALS:
    void columnToggled(const QString &key, bool shown);

private:
    void changed(QStandardItem *item);
    void filter();
    QStandardItem *item(const QString &key) const;

    QLineEdit *m_search;
    QTreeView *m_tree;
    QStandardItemModel m_model;
    QHash<QString, QStandardItem *> m_items;
    bool m_updating = false;
};

}  // namespace orrery::gui
