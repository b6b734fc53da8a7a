#include "control_surface.hpp"

#include "log.hpp"

#include <pwd.h>
#include <unistd.h>

namespace cqmgr::qmgr {

std::optional<ControlSurface::Owner> ControlSurface::socket_owner(const conf::QmgrParams& params) {
    if (params.cqmgr_control_socket.empty()) return std::nullopt;
    passwd* pw = ::getpwnam(params.mail_owner.c_str());
    if (!pw) return std::nullopt;
    return Owner{pw->pw_uid, pw->pw_gid};
}

ControlSurface::ControlSurface(asio::io_context& io, const conf::QmgrParams& params,
                               QueueManager& qm, const FlushDomains& flush_domains,
                               std::shared_ptr<state::Store> store, const WallClock& clock,
                               std::optional<Owner> owner, std::string version)
    : io_(io), params_(params), qm_(qm), owner_(owner), admin_state_(std::move(store)),
      flushes_(io, params, flush_domains, qm.service_slots()),
      commands_(
          qm.scheduler(), admin_state_, clock,
          [this](const std::string& site) { return flushes_.ask(site); },
          [](const std::string& line) { log::info(line); }),
      queries_(qm.control_sources(), {::getpid(), std::move(version), clock.precise()}),
      dispatch_(queries_, commands_) {
    qm_.use_control(&commands_);
}

ControlSurface::~ControlSurface() {
    qm_.use_control(nullptr);
}

void ControlSurface::start() {
    if (params_.cqmgr_control_socket.empty()) return;
    ControlServer::Options o;
    o.path = params_.cqmgr_control_socket;
    o.allowed = {0};
    if (owner_) {
        o.allowed.push_back(owner_->uid);
        o.owner_uid = owner_->uid;
        o.owner_gid = owner_->gid;
    }
    o.write_timeout = std::chrono::seconds(params_.qmgr_ipc_timeout);
    o.idle_timeout = std::chrono::seconds(params_.configured_max_idle);
    o.debug = [](const std::string& line) { log::debug(line); };
    server_ = std::make_unique<ControlServer>(
        io_, o, [this](std::string_view line, uid_t uid) { return dispatch_.answer(line, uid); },
        [](const std::string& w) { log::warn(w); });
    if (auto started = server_->start(); !started)
        log::warn("control: " + started.error().message());
}

} // namespace cqmgr::qmgr
