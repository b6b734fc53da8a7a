#include "state_open.hpp"

#include "admin_state.hpp"
#include "log.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::qmgr {

std::shared_ptr<state::Store> open_state_store(const conf::QmgrParams& params) {
    auto warn = [](const std::string& w) { log::warn(w); };
    if (params.cqmgr_state_database.empty()) {
        // Nothing is opened in data_directory; an earlier version's
        // settings there would be silently lost.
        struct stat st;
        std::string old = params.data_directory + "/" + std::string(AdminState::file_name);
        if (::lstat(old.c_str(), &st) == 0)
            log::warn("control: " + old +
                      " is not read: the control settings are kept in the state store, and "
                      "cqmgr_state_database is empty");
        return nullptr;
    }
    state::Store::Options options;
    // Looked up now: the jail need not hold the password file.
    if (passwd* pw = ::getpwnam(params.mail_owner.c_str()))
        options.owner = state::Owner{pw->pw_uid, pw->pw_gid};
    else if (::geteuid() == 0) {
        log::warn("state: cannot use " + params.cqmgr_state_database + ": unknown mail_owner " +
                  params.mail_owner + "; destination state and control settings are not kept");
        return nullptr;
    }
    std::shared_ptr<state::Store> store =
        state::Store::open(params.cqmgr_state_database, warn, options);
    if (store) AdminState::import_file(*store, params.data_directory, options.owner);
    return store;
}

} // namespace cqmgr::qmgr
