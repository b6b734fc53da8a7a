// Each transport's process limit from master.cf (see process_limits.hpp).
#include "process_limits.hpp"

#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/master_cf.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

std::map<std::string, int64_t> transport_process_limits(const conf::QmgrParams& params) {
    std::map<std::string, int64_t> out;
    conf::MasterCf master;
    if (!master.load_dir(params.config_directory)) {
        log::warn("no agent shares (priority lanes, destination shares): " + master.error());
        return out;
    }
    conf::MasterContext context;
    context.daemon_directory = params.daemon_directory;
    context.default_process_limit = params.default_process_limit;
    for (const auto& service : master.services()) {
        if (service.type != "unix") continue;
        try {
            int64_t limit = conf::master_spawn(service, context).max_proc;
            if (limit > 0) out[service.service] = limit;
        } catch (const conf::ConfigError&) {
            // master(8) refuses this line; it starts no agents either.
        }
    }
    return out;
}

} // namespace cqmgr::qmgr
