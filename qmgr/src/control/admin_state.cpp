#include "admin_state.hpp"

#include "log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace cqmgr::qmgr {

namespace {

using Setting = state::ControlSetting;

Setting setting_of(const AdminRecord& r) {
    Setting s;
    s.transport = r.target.transport;
    s.destination = r.target.queue;
    if (r.kind == core::AdminKind::hold) {
        s.kind = Setting::Kind::suspend;
        s.until = r.hold.until;
        s.reason = r.hold.reason;
        s.uid = r.hold.uid;
        s.since = r.hold.since;
    } else {
        s.kind = Setting::Kind::throttle;
        s.until = r.cap.until;
        s.concurrency = r.cap.concurrency;
        s.uid = r.cap.uid;
        s.since = r.cap.since;
    }
    return s;
}

AdminRecord record_of(const Setting& s) {
    AdminRecord r;
    r.target = core::AdminTarget{s.transport, s.destination};
    if (s.kind == Setting::Kind::suspend) {
        r.kind = core::AdminKind::hold;
        r.hold = core::AdminHold{s.until, s.reason, s.uid, s.since};
    } else {
        r.kind = core::AdminKind::cap;
        r.cap = core::AdminCap{s.concurrency, s.until, s.uid, s.since};
    }
    return r;
}

// Reads all of `fd`, up to one byte more than `limit`.
bool read_up_to(int fd, size_t limit, std::string& out) {
    char buf[8192];
    while (out.size() <= limit) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return true;
}

} // namespace

std::vector<AdminRecord> admin_records(const std::map<core::AdminTarget, core::AdminHold>& holds,
                                       const std::map<core::AdminTarget, core::AdminCap>& caps) {
    std::vector<AdminRecord> out;
    for (const auto& [target, hold] : holds)
        out.push_back(AdminRecord{core::AdminKind::hold, target, hold, {}});
    for (const auto& [target, cap] : caps)
        out.push_back(AdminRecord{core::AdminKind::cap, target, {}, cap});
    return out;
}

std::string encode_admin_records(const std::vector<AdminRecord>& records) {
    std::vector<Setting> settings;
    settings.reserve(records.size());
    for (const AdminRecord& r : records)
        settings.push_back(setting_of(r));
    return state::encode_control_settings(settings);
}

Result<std::vector<AdminRecord>, state::SettingsError> decode_admin_records(std::string_view text) {
    auto settings = state::decode_control_settings(text);
    if (!settings) return Failure{settings.error()};
    std::vector<AdminRecord> out;
    out.reserve(settings->size());
    for (const Setting& s : *settings)
        if (s.kind != Setting::Kind::rule) out.push_back(record_of(s));
    return out;
}

AdminState::AdminState(std::shared_ptr<state::Store> store) : store_(std::move(store)) {}

void AdminState::log_store_warnings() const {
    for (const std::string& w : store_->take_warnings())
        log::warn(w);
}

void AdminState::load_all() const {
    if (loaded_ || !store_) return;
    loaded_ = true;
    auto doc = store_->get_control();
    log_store_warnings();
    if (!doc)
        log::warn("control: cannot read the kept settings from " + store_->path() + ": " +
                  doc.error().message());
    if (!doc || !*doc) return;
    auto settings = state::decode_control_settings(**doc);
    if (!settings) {
        log::warn("control: ignoring the corrupt settings kept in " + store_->path() + ": " +
                  settings.error().message());
        return;
    }
    for (Setting& s : *settings) {
        if (s.kind == Setting::Kind::rule)
            rules_.push_back(std::move(s));
        else
            admin_.push_back(record_of(s));
    }
}

std::vector<AdminRecord> AdminState::load() const {
    load_all();
    return admin_;
}

std::vector<state::ControlSetting> AdminState::load_rules() const {
    load_all();
    return rules_;
}

bool AdminState::save(const std::vector<AdminRecord>& records) const {
    if (!store_) {
        log::warn("control: the settings are not kept across restarts: there is no state store "
                  "(cqmgr_state_database)");
        return false;
    }
    load_all();
    // What is kept is what the store holds: nothing changes on a failure.
    std::vector<AdminRecord> before = std::exchange(admin_, records);
    if (write()) return true;
    admin_ = std::move(before);
    return false;
}

bool AdminState::save_rules(std::vector<state::ControlSetting> rules) const {
    if (!store_) return false;
    load_all();
    std::vector<Setting> before = std::exchange(rules_, std::move(rules));
    if (write()) return true;
    rules_ = std::move(before);
    return false;
}

bool AdminState::write() const {
    std::vector<Setting> settings;
    settings.reserve(admin_.size() + rules_.size());
    for (const AdminRecord& r : admin_)
        settings.push_back(setting_of(r));
    settings.insert(settings.end(), rules_.begin(), rules_.end());
    std::string doc = state::encode_control_settings(settings);
    std::string error;
    if (doc.size() > state::max_control_bytes)
        error = "longer than " + std::to_string(state::max_control_bytes) + " bytes";
    else if (auto put = store_->put_control(doc); !put)
        error = put.error().message();
    log_store_warnings();
    if (error.empty()) return true;
    log::warn("control: cannot keep the settings in " + store_->path() + ": " + error);
    return false;
}

bool AdminState::fits(const std::vector<AdminRecord>& records) {
    return encode_admin_records(records).size() <= state::max_control_bytes;
}

void AdminState::import_file(state::Store& store, const std::string& data_directory,
                             const std::optional<state::Owner>& owner) {
    const std::string path = data_directory + "/" + std::string(file_name);
    struct stat st;
    if (::lstat(path.c_str(), &st) < 0) return; // nothing to import: the usual case
    if (auto kept = store.get_control(); !kept || *kept) return; // imported already
    auto refuse = [&](const std::string& why) {
        log::warn("control: cannot import " + path + ": " + why);
    };
    // Earlier versions wrote it as root, mode 0600: root reads it, but only
    // the file itself, in a directory that mail_owner resolves.
    int fd = state::open_no_link(path, owner, O_RDONLY);
    if (fd < 0) {
        if (errno == ELOOP) return refuse("it is a symbolic link");
        if (errno == EPERM) return refuse(data_directory + " does not belong to mail_owner");
        return refuse(std::strerror(errno));
    }
    std::string text;
    std::string why;
    const uid_t own = state::file_owner(owner);
    if (::fstat(fd, &st) < 0)
        why = std::strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "it is not a regular file";
    else if (st.st_nlink != 1)
        why = "it has " + std::to_string(st.st_nlink) + " hard links";
    else if (st.st_uid != 0 && st.st_uid != own)
        why = "it belongs to uid " + std::to_string(st.st_uid);
    else if (!read_up_to(fd, state::max_control_bytes, text))
        why = std::strerror(errno);
    ::close(fd);
    if (!why.empty()) return refuse(why);
    auto records = decode_admin_records(text);
    if (!records) return refuse("not a valid settings file: " + records.error().message());
    if (auto put = store.put_control(encode_admin_records(*records)); !put)
        return refuse("the state store: " + put.error().message());
    const std::string imported = path + ".imported";
    int rename_errno = 0;
    {
        state::AsOwner as(owner);
        if (!as.ok() || ::rename(path.c_str(), imported.c_str()) < 0) rename_errno = errno;
    }
    log::info("control: " + std::to_string(records->size()) + " settings imported from " + path +
              " into the state store " + store.path() +
              (rename_errno == 0
                   ? "; the file is now " + imported
                   : "; renaming the file failed: " + std::string(std::strerror(rename_errno))));
}

} // namespace cqmgr::qmgr
