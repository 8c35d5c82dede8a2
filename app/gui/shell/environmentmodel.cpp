// SPDX-License-Identifier: GPL-3.0-or-later
#include "environmentmodel.h"

#include <QBrush>
#include <QColor>

namespace orrery::gui {

void EnvironmentModel::setChecks(QList<core::Check> checks)
{
    beginResetModel();
    m_checks = std::move(checks);
    endResetModel();
}

int EnvironmentModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_checks.size());
}

int EnvironmentModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EnvironmentModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const core::Check &check = m_checks.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case StatusColumn:
            return core::statusLabel(check.status);
        case NameColumn:
            return check.name;
        case DetailColumn:
            return check.hint.isEmpty() ? check.detail : check.detail + QStringLiteral(" — ") + check.hint;
        default:
            return {};
        }
    case Qt::ToolTipRole:
        return check.hint.isEmpty() ? check.detail : check.hint;
    case Qt::ForegroundRole:
        if (index.column() != StatusColumn)
            return {};
        switch (check.status) {
        case core::Check::Status::Ok:
            return QBrush(QColor(0x2e, 0x7d, 0x32));
        case core::Check::Status::Warning:
            return QBrush(QColor(0xef, 0x6c, 0x00));
        case core::Check::Status::Failed:
            return QBrush(QColor(0xc6, 0x28, 0x28));
        }
        return {};
    default:
        return {};
    }
}

QVariant EnvironmentModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case StatusColumn:
        return tr("Status");
    case NameColumn:
        return tr("Check");
    case DetailColumn:
        return tr("Detail");
    default:
        return {};
    }
}

}  // namespace orrery::gui
