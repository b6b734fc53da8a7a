// Each transport's process limit from master.cf (see process_limits.hpp).
#include "process_limits.hpp"

#include "cqmgr/conf/master_cf.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

std::map<std::string, int64_t> transport_process_limits(const conf::QmgrParams& params) {
    conf::MasterCf master;
    if (!master.load_dir(params.config_directory)) {
        log::warn("no agent shares (priority lanes, destination shares): " + master.error());
        return {};
    }
    conf::MasterContext context;
    context.daemon_directory = params.daemon_directory;
    context.default_process_limit = params.default_process_limit;
    return conf::process_limits(master, context);
}

} // namespace cqmgr::qmgr
