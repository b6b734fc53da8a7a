// The c-ares channel of MX lookups (see mx_channel.hpp).
#include "mx_channel.hpp"

#include "cqmgr/conf/qmgr_params.hpp"

#include <algorithm>
#include <ares.h>
#include <arpa/inet.h>

namespace cqmgr::qmgr {

struct MxChannel::Hook {
    SocketHook fn;

    // c-ares's sock_state_cb: passes the news on to the owner.
    static void on_state(void* data, ares_socket_t fd, int read, int write) {
        auto* hook = static_cast<Hook*>(data);
        if (hook->fn) hook->fn(fd, read != 0, write != 0);
    }
};

namespace {

// The library's global initialisation, once per process (it is a no-op on
// this platform, but its status is checked all the same).
int library_status() {
    static const int status = ares_library_init(ARES_LIB_INIT_ALL);
    return status;
}

std::string failure(const char* what, int status) {
    return std::string(what) + ": " + ares_strerror(status);
}

// Reads "IPv4[:PORT]" or "[IPv6][:PORT]" into `node` (c-ares's own list
// parser, in this version, misreads an IPv4:PORT after an IPv6 address).
bool parse_server(const std::string& text, ares_addr_port_node& node) {
    std::string host = text;
    std::string port;
    if (!host.empty() && host.front() == '[') {
        size_t close = host.find(']');
        if (close == std::string::npos) return false;
        std::string rest = host.substr(close + 1);
        host = host.substr(1, close - 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port = rest.substr(1);
        }
        node.family = AF_INET6;
        if (inet_pton(AF_INET6, host.c_str(), &node.addr.addr6) != 1) return false;
    } else {
        if (size_t colon = host.find(':'); colon != std::string::npos) {
            port = host.substr(colon + 1);
            host.resize(colon);
        }
        node.family = AF_INET;
        if (inet_pton(AF_INET, host.c_str(), &node.addr.addr4) != 1) return false;
    }
    int p = 53;
    if (!port.empty()) {
        if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
            return false;
        p = std::stoi(port);
        if (p < 1 || p > 65535) return false;
    }
    node.udp_port = node.tcp_port = p;
    return true;
}

} // namespace

MxResolverOptions mx_resolver_options(const conf::QmgrParams& params) {
    MxResolverOptions o;
    o.servers = params.cqmgr_dns_servers;
    return o;
}

Result<MxChannel, std::string> MxChannel::open(const MxResolverOptions& options) {
    if (int status = library_status(); status != ARES_SUCCESS)
        return Failure{failure("ares_library_init", status)};
    auto hook = std::make_unique<Hook>();
    ares_options opts{};
    int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS |
               ARES_OPT_EDNSPSZ;
    opts.sock_state_cb = &Hook::on_state;
    opts.sock_state_cb_data = hook.get();
    // Two tries of which the second waits twice as long (c-ares doubles
    // the timeout each round over the servers): with one server c-ares
    // gives a query up at about the lookup's deadline.
    int64_t first = options.query_timeout.count() > 0 ? options.query_timeout.count()
                                                      : options.deadline.count() / 3;
    opts.timeout = static_cast<int>(std::clamp<int64_t>(first, 10, 60'000));
    opts.tries = 2;
    // EDNS, so that a long MX set (hundreds of bytes) mostly fits a UDP
    // reply; c-ares asks again without it when a server does not know it,
    // and over TCP when a reply is truncated.
    opts.flags = ARES_FLAG_EDNS;
    opts.ednspsz = 1232;
    if (!options.resolv_conf.empty()) {
        mask |= ARES_OPT_RESOLVCONF;
        opts.resolvconf_path = const_cast<char*>(options.resolv_conf.c_str());
    }
    ares_channel channel = nullptr;
    if (int status = ares_init_options(&channel, &opts, mask); status != ARES_SUCCESS)
        return Failure{failure("ares_init_options", status)};
    MxChannel c(channel, std::move(hook));
    if (!options.servers.empty()) {
        std::vector<ares_addr_port_node> nodes(options.servers.size());
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (!parse_server(options.servers[i], nodes[i]))
                return Failure{"bad name server address: " + options.servers[i]};
            nodes[i].next = i + 1 < nodes.size() ? &nodes[i + 1] : nullptr;
        }
        if (int status = ares_set_servers_ports(channel, nodes.data()); status != ARES_SUCCESS)
            return Failure{failure("ares_set_servers_ports", status)};
    }
    return c;
}

MxChannel::MxChannel(ares_channeldata* channel, std::unique_ptr<Hook> hook)
    : channel_(channel), hook_(std::move(hook)) {}

MxChannel::MxChannel(MxChannel&& o) noexcept
    : channel_(std::exchange(o.channel_, nullptr)), hook_(std::move(o.hook_)) {}

MxChannel& MxChannel::operator=(MxChannel&& o) noexcept {
    if (this != &o) {
        if (channel_) ares_destroy(channel_);
        channel_ = std::exchange(o.channel_, nullptr);
        hook_ = std::move(o.hook_);
    }
    return *this;
}

MxChannel::~MxChannel() {
    // The hook is still there while c-ares closes its sockets.
    if (channel_) ares_destroy(channel_);
}

void MxChannel::set_socket_hook(SocketHook hook) {
    hook_->fn = std::move(hook);
}

std::vector<std::string> MxChannel::servers() const {
    std::vector<std::string> out;
    ares_addr_port_node* list = nullptr;
    if (!channel_ || ares_get_servers_ports(channel_, &list) != ARES_SUCCESS) return out;
    for (ares_addr_port_node* n = list; n; n = n->next) {
        char text[INET6_ADDRSTRLEN] = "";
        if (!inet_ntop(n->family, &n->addr, text, sizeof text)) continue;
        int port = n->udp_port ? n->udp_port : 53;
        out.push_back(n->family == AF_INET6 ? "[" + std::string(text) + "]:" + std::to_string(port)
                                            : std::string(text) + ":" + std::to_string(port));
    }
    ares_free_data(list);
    return out;
}

} // namespace cqmgr::qmgr
