// The control socket's suspensions and throttles, kept across restarts and
// `postfix reload` in the state store (cqmgr_state_database), next to the
// destination records: one document (state/control_record.hpp) under its
// own key, replaced in one LMDB transaction.  The reply rules' actions in
// force (cqmgr_reply_actions) are kept in the same document: each half is
// saved with the other half as last read or saved.
//
// Nothing of it lives in data_directory by name, and no descriptor of that
// directory is kept: the store's files are open already when cqmgr enters
// its chroot jail.  The document is written only when a command changes
// something (or, at start-up, to drop settings that ended while cqmgr was
// not running).  One limit, state::max_control_bytes, holds for what is
// written and what is read back; a command that would go past it is
// refused (ControlCommands).  Earlier versions kept the settings in
// data_directory/cqmgr-control.json: import_file() takes them over once,
// before the jail.
#pragma once

#include "cqmgr/core/admin.hpp"
#include "cqmgr/state/control_record.hpp"
#include "cqmgr/state/store.hpp"

#include <map>
#include <memory>
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

// The document for `records` (state/control_record.hpp).
std::string encode_admin_records(const std::vector<AdminRecord>& records);
// The records in `text`, ended ones included (the reader logs those), or
// why the text is not a valid list.
Result<std::vector<AdminRecord>, state::SettingsError> decode_admin_records(std::string_view text);

class AdminState {
  public:
    // The file earlier versions kept the settings in, in data_directory.
    static constexpr std::string_view file_name = "cqmgr-control.json";

    // Keeps nothing: every save() fails with a warning.
    AdminState() = default;
    // Keeps the settings in `store` (nullptr: nothing).
    explicit AdminState(std::shared_ptr<state::Store> store);

    // The kept settings, also those whose end has passed since they were
    // saved.  None kept is an empty list; an unreadable or corrupt
    // document is logged as a warning and taken as empty.
    std::vector<AdminRecord> load() const;
    // Replaces the kept settings with `records`, atomically; false (with a
    // warning logged) when that failed.
    bool save(const std::vector<AdminRecord>& records) const;
    // The reply rules' actions kept (ControlSetting::Kind::rule), and
    // their replacement (false without a store, or when it failed, with a
    // warning then).
    std::vector<state::ControlSetting> load_rules() const;
    bool save_rules(std::vector<state::ControlSetting> rules) const;
    // Whether `records` can be kept: their document is no longer than
    // state::max_control_bytes.
    static bool fits(const std::vector<AdminRecord>& records);

    // Before the jail: when the store holds no settings yet and
    // `data_directory` has an earlier version's cqmgr-control.json, reads
    // it (the file itself, never a link; owner.hpp), keeps its settings in
    // `store` and renames it to cqmgr-control.json.imported.  A file that
    // is not a plain file of root's or `owner`'s, or not a valid document,
    // is left alone with a warning.
    static void import_file(state::Store& store, const std::string& data_directory,
                            const std::optional<state::Owner>& owner);

  private:
    // Logs what the store had to report.
    void log_store_warnings() const;
    // Reads the document once, into admin_ and rules_.
    void load_all() const;
    // Writes admin_ and rules_ as the document.
    bool write() const;

    std::shared_ptr<state::Store> store_;
    mutable bool loaded_ = false;
    mutable std::vector<AdminRecord> admin_;
    mutable std::vector<state::ControlSetting> rules_;
};

} // namespace cqmgr::qmgr
