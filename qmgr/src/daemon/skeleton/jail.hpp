// Restricting the process as a Postfix daemon does after its pre-jail
// initialisation: with -u, the mail_owner account's IDs and groups; with -c,
// a chroot into the queue directory.  The account is looked up before the
// chroot, because the jail has no password file.
#pragma once

#include <string>

namespace cqmgr::qmgr {

// Enters `root_dir` (when not empty) and becomes `user` (when not empty),
// in the order and with the fatal texts of Postfix's chroot_uid().
void enter_jail(const std::string& root_dir, const std::string& user);

} // namespace cqmgr::qmgr
