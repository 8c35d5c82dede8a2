// SPDX-License-Identifier: GPL-3.0-or-later
#include "interrupt.h"

#include <atomic>
#include <csignal>

namespace orrery::cli {

namespace {

std::atomic<bool> g_requested{false};

extern "C" void onInterrupt(int sig)
{
    g_requested.store(true);
    std::signal(sig, SIG_DFL);  // the second one is not caught
}

}  // namespace

InterruptScope::InterruptScope()
{
    g_requested.store(false);
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
}

InterruptScope::~InterruptScope()
{
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

bool InterruptScope::requested()
{
    return g_requested.load();
}

}  // namespace orrery::cli
