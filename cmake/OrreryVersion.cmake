# SPDX-License-Identifier: GPL-3.0-or-later
# The one place Orrery's version is written; read by the top-level project and by trainer/ when
# it is built on its own on a cluster.
set(ORRERY_VERSION 0.1.0)
