// Interrupts: SIGINT (Ctrl-C), SIGTERM and SIGHUP turned into a flag the
// coordinator's wait loop polls, so a run or sweep that is told to stop marks
// itself `interrupted` in the store (resumable) instead of staying `running`.
//
// The handler only records the signal (async-signal-safe). It is installed
// with SA_RESETHAND: a second signal of the same kind kills the process the
// default way, so a hung shutdown can always be forced.
#pragma once

namespace palladium {

// Installs the handlers; idempotent.
void install_interrupt_handlers();

// The first signal received since install (0: none).
int interrupt_signal();

// For tests: forget a received signal.
void clear_interrupt();

}  // namespace palladium
