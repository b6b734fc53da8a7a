// Linked into cqmgr in sanitizer builds only (CQMGR_SANITIZE), together with
// -Wl,--wrap=setuid: cqmgr stays dumpable after it drops privileges.
//
// When a process changes its user id, the kernel marks it non-dumpable: its
// /proc/self files then belong to root, and no other task may ptrace it. The
// sanitizers need both once cqmgr runs as mail_owner. UBSan reads
// /proc/self/maps to print the stack of a report (without it a report is a
// single line), and LeakSanitizer stops the process with ptrace from a
// helper task before it scans memory at exit (without it the check ends in
// "LeakSanitizer has encountered a fatal error"). So every successful
// setuid() of cqmgr is followed here by PR_SET_DUMPABLE.
#include <sys/prctl.h>
#include <sys/types.h>

extern "C" int __real_setuid(uid_t uid);

// The linker sends cqmgr's calls of setuid() here.
extern "C" int __wrap_setuid(uid_t uid) {
    int rc = __real_setuid(uid);
    if (rc == 0) ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return rc;
}
