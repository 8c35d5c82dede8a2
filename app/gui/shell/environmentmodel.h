// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "orrery/core/diagnostics.h"

#include <QAbstractTableModel>

namespace orrery::gui {

// The environment checks (what `orrery doctor` prints) as a table: status, check, detail.
// Lives on the UI thread; setChecks() replaces all rows at once.
class EnvironmentModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StatusColumn, NameColumn, DetailColumn, ColumnCount };

    using QAbstractTableModel::QAbstractTableModel;

    void setChecks(QList<core::Check> checks);
    const QList<core::Check> &checks() const { return m_checks; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<core::Check> m_checks;
};

}  // namespace orrery::gui
