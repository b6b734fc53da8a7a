// The identity a root process takes on for what it opens in a directory
// that mail_owner owns (docs/design.md, "What is opened before the jail").
//
// cqmgr opens its state store in data_directory before it gives up root.
// mail_owner owns that directory, so whoever holds mail_owner can put a
// symbolic link (or a hard link, or a file of its own) where the store,
// its lock file or an earlier version's control file is expected; a root
// process that opens, creates, renames or removes by that name would then
// act on a file of the attacker's choice.  Done with mail_owner's effective
// ids instead (AsOwner), every such name is resolved with no more rights
// than the attacker has already: a planted link leads only to files that
// mail_owner could write anyway.  LMDB opens its lock file by name itself,
// so this is the one way to cover its opens too.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cqmgr::state {

// mail_owner's user and group.
struct Owner {
    uid_t uid = 0;
    gid_t gid = 0;
};

// While it lives, the process's effective user and group are `owner`'s and
// its supplementary groups just owner's group (root's groups would
// otherwise still open files through their group bits).  Nothing changes
// when `owner` is empty or the process does not run as root.  The switch
// applies to every thread of the process: take it only while no other
// thread opens files on root's behalf.
class AsOwner {
  public:
    explicit AsOwner(const std::optional<Owner>& owner);
    ~AsOwner();
    AsOwner(const AsOwner&) = delete;
    AsOwner& operator=(const AsOwner&) = delete;

    // False when the switch failed (errno set): do nothing in its name.
    bool ok() const { return ok_; }

  private:
    bool switched_ = false;
    bool ok_ = true;
    gid_t saved_egid_ = 0;
    std::vector<gid_t> saved_groups_;
};

// Gives up root for good, for `owner` (a child process that is to do no
// more than mail_owner may); true when there is nothing to give up.
bool drop_to(const std::optional<Owner>& owner);

// The uid that files made by this process under AsOwner belong to.
uid_t file_owner(const std::optional<Owner>& owner);

// Opens the file at `path` itself, never a link there, as the process is
// (root, too): the directory is resolved with `owner`'s ids (AsOwner), so
// a link planted on the way leads nowhere mail_owner could not go, that
// directory must belong to file_owner(owner), and the last name is opened
// with O_NOFOLLOW.  -1 with errno set on failure (ELOOP: `path` is a
// symbolic link; EPERM: the directory belongs to someone else).  For a
// root process that must read or take over a root-owned file an earlier
// version left there.
int open_no_link(const std::string& path, const std::optional<Owner>& owner, int flags);

// Why the file at `path` (looked at with lstat, not followed) cannot be a
// file of the store: a symbolic link, not a regular file, more than one
// link, or another owner than file_owner(owner); "" when it may be used or
// does not exist.
std::string unusable_file(const std::string& path, const std::optional<Owner>& owner);

} // namespace cqmgr::state
