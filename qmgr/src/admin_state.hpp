// The control socket's suspensions and throttles, kept across restarts and
// `postfix reload` in data_directory/cqmgr-control.json.
//
// cqmgr may run chrooted to the queue directory, where data_directory is out
// of reach: the directory is opened before the jail (open_directory()) and
// the file is read and written relative to that descriptor.  A write goes
// to a temporary file that is synced and renamed over the old one, so the
// file is always either the old or the new list.  The file is written only
// when a command changes something (or, at start-up, to drop settings that
// ended while cqmgr was not running): without commands, cqmgr neither
// reads nor writes anything there that stock qmgr does not.
#pragma once

#include "cqmgr/core/admin.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

// One kept setting: a suspension (kind hold, `hold`) or a throttle (kind
// cap, `cap`) of `target`.
struct AdminRecord {
    core::AdminKind kind = core::AdminKind::hold;
    core::AdminTarget target;
    core::AdminHold hold;
    core::AdminCap cap;

    int64_t until() const { return kind == core::AdminKind::hold ? hold.until : cap.until; }
    bool operator==(const AdminRecord&) const = default;
};

// The records of the scheduler's current settings.
std::vector<AdminRecord> admin_records(const std::map<core::AdminTarget, core::AdminHold>& holds,
                                       const std::map<core::AdminTarget, core::AdminCap>& caps);

// The file's text for `records` (JSON, one document).
std::string encode_admin_records(const std::vector<AdminRecord>& records);
// The records in `text`, ended ones included (the reader logs those);
// nullopt and `error` set when the text is not a valid list.
std::optional<std::vector<AdminRecord>> decode_admin_records(std::string_view text,
                                                             std::string& error);

class AdminState {
  public:
    static constexpr std::string_view file_name = "cqmgr-control.json";

    // Keeps nothing: every save() fails with a warning.
    AdminState() = default;
    // `dir_fd` is data_directory opened by open_directory() (or -1); it is
    // owned from now on.  `dir_name` is its path, for log lines.
    AdminState(int dir_fd, std::string dir_name);
    ~AdminState();
    AdminState(const AdminState&) = delete;
    AdminState& operator=(const AdminState&) = delete;

    // Opens `path` as a directory (before the jail); -1 when it cannot be
    // opened, which matters only once something must be saved.
    static int open_directory(const std::string& path);

    // The kept settings, also those whose end has passed since they were
    // saved.  A missing file is an empty list; an unreadable or corrupt one
    // is logged as a warning and taken as empty.
    std::vector<AdminRecord> load() const;
    // Replaces the kept settings with `records`, atomically; false (with a
    // warning logged) when that failed.
    bool save(const std::vector<AdminRecord>& records) const;

  private:
    std::string path() const;

    int fd_ = -1;
    std::string dir_name_;
};

} // namespace cqmgr::qmgr
