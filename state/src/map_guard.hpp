// A guard against SIGBUS from the store's memory maps.
//
// LMDB maps its data file and its lock file and reads them as memory.
// When a file is cut shorter while mapped (an admin's `truncate`, a disk
// error), touching a page past its new end raises SIGBUS, which kills the
// process.  A check of the file's size before each use narrows that window
// but cannot close it: the file may shrink between the check and the read,
// or during a transaction.  So each use of the store runs under
// map_guarded(): a SIGBUS raised on this thread while it runs jumps back
// to it, and it returns false.  The LMDB environment is then in an unknown
// state (a transaction cut short, perhaps its write lock held) and must
// not be used again; the store sets it aside (store.cpp).
//
// What runs under the guard must be C calls into LMDB and plain copies:
// the jump skips the destructors of whatever the guarded code created.
// A SIGBUS outside any guard keeps the disposition it had before.
#pragma once

#include <csetjmp>

namespace cqmgr::state::detail {

struct GuardFrame {
    sigjmp_buf env;
    GuardFrame* outer;
};

// The innermost guard of this thread (nullptr: none).
GuardFrame*& current_guard();
// Installs the SIGBUS handler (once per process).
void install_map_guard();

// Runs `f()`; false when a SIGBUS cut it short.
template <class F> bool map_guarded(F&& f) {
    install_map_guard();
    GuardFrame frame;
    frame.outer = current_guard();
    if (sigsetjmp(frame.env, 1) != 0) {
        current_guard() = frame.outer;
        return false;
    }
    current_guard() = &frame;
    f();
    current_guard() = frame.outer;
    return true;
}

} // namespace cqmgr::state::detail
