#include "metrics_listen.hpp"

#include <charconv>

namespace cqmgr::qmgr {

namespace {
// A port from 1 to 65535, all digits; 0 otherwise.
uint16_t parse_port(std::string_view text) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535) return 0;
    return static_cast<uint16_t>(port);
}
} // namespace

std::vector<MetricsAddress> metrics_addresses(std::string_view listen) {
    const size_t colon = listen.rfind(':');
    const uint16_t port =
        parse_port(colon == std::string_view::npos ? listen : listen.substr(colon + 1));
    if (port == 0) return {};
    if (colon == std::string_view::npos)
        return {{{asio::ip::address_v4::loopback(), port}, false},
                {{asio::ip::address_v6::loopback(), port}, true}};
    std::string_view host = listen.substr(0, colon);
    const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
    if (bracketed) host = host.substr(1, host.size() - 2);
    error_code ec;
    asio::ip::address address = asio::ip::make_address(std::string(host), ec);
    // An IPv6 address only in brackets, an IPv4 one only without.
    if (ec || address.is_v6() != bracketed) return {};
    return {{{address, port}, false}};
}

} // namespace cqmgr::qmgr
