#include "cqmgr/protocol/delivery_client.hpp"

namespace cqmgr::protocol {

namespace {
using Kind = ScanItem::Kind;
// The announcement: protocol=delivery_request_protocol.
constexpr ScanItem announcement_items[] = {{Kind::streq, "protocol", delivery_protocol}};
// The reply: the hop status in the order Postfix reads it, then the status.
constexpr ScanItem reply_items[] = {
    {Kind::str, "status"},   {Kind::str, "diag_type"}, {Kind::str, "diag_text"},
    {Kind::str, "mta_type"}, {Kind::str, "mta_mname"}, {Kind::str, "action"},
    {Kind::str, "reason"},   {Kind::num, "status"},
};
constexpr size_t reply_status = 7;
} // namespace

const char* kind_name(DeliveryOutcome::Kind k) {
    switch (k) {
    case DeliveryOutcome::Kind::replied:
        return "replied";
    case DeliveryOutcome::Kind::unavailable:
        return "unavailable";
    case DeliveryOutcome::Kind::crashed:
        return "crashed";
    }
    return "unknown";
}

AgentSession::AgentSession(asio::any_io_executor ex) : ex_(std::move(ex)) {}

AgentSession::~AgentSession() {
    close();
}

void AgentSession::close() {
    if (conv_) conv_->close();
    conv_.reset();
}

std::string AgentSession::transport() const {
    auto slash = path_.rfind('/');
    return slash == std::string::npos ? path_ : path_.substr(slash + 1);
}

DeliveryOutcome AgentSession::failed(DeliveryOutcome::Kind kind, std::string warning) {
    DeliveryOutcome o;
    o.kind = kind;
    o.reply.hop.status = "4.3.0";
    o.reply.hop.reason = kind == DeliveryOutcome::Kind::unavailable
                             ? "mail transport unavailable"
                             : "unknown mail transport error";
    o.reply.status = -1;
    o.warning = std::move(warning);
    return o;
}

awaitable<bool> AgentSession::open(std::string path, DeliveryTimeouts timeouts) {
    if (!start(std::move(path), timeouts)) co_return false;
    co_return co_await finish_open();
}

bool AgentSession::start(std::string path, DeliveryTimeouts timeouts) {
    close();
    path_ = std::move(path);
    timeouts_ = timeouts;
    failure_ = DeliveryOutcome{};
    conv_ = Conversation::create(ex_);
    if (conv_->connect_start(path_)) return true;
    connect_failed();
    return false;
}

void AgentSession::connect_failed() {
    failure_ = failed(DeliveryOutcome::Kind::unavailable,
                      "connect to transport " + path_ + ": " + conv_->error());
    close();
}

awaitable<bool> AgentSession::finish_open() {
    if (!co_await conv_->connect_finish(timeouts_.connect)) {
        connect_failed();
        co_return false;
    }
    AttrScan scan(announcement_items, path_ + " socket");
    if (!co_await run_scan(scan, timeouts_.announce)) {
        // Stock gives up on the whole process here; we give up on the agent.
        failure_ = failed(DeliveryOutcome::Kind::unavailable, path_ + " socket: timeout");
        close();
        co_return false;
    }
    // Kept whether or not the announcement fails (announcement_warning()).
    failure_.detail = scan.warning();
    if (scan.failed()) {
        failure_ =
            failed(DeliveryOutcome::Kind::unavailable, path_ + " socket: malformed response");
        failure_.detail = scan.warning();
        close();
        co_return false;
    }
    // Also when the agent closed before its first byte: stock's scan finds
    // nothing wrong with that, and the write finds the dead peer.
    co_return true;
}

awaitable<bool> AgentSession::run_scan(AttrScan& scan, DeliveryTimeouts::Duration first_byte) {
    for (;;) {
        std::string& in = conv_->pending();
        if (!in.empty()) {
            std::string_view rest(in);
            scan.feed(rest);
            in.erase(0, in.size() - rest.size());
            if (scan.done()) co_return true;
        }
        auto end = co_await conv_->read_some(scan.started() ? timeouts_.read : first_byte);
        if (end == Conversation::ReadEnd::data) continue;
        if (end == Conversation::ReadEnd::timeout && !scan.started()) co_return false;
        scan.end(end == Conversation::ReadEnd::timeout);
        co_return true;
    }
}

awaitable<DeliveryOutcome> AgentSession::deliver(DeliveryRequest request) {
    co_return co_await deliver_encoded(request.encode());
}

awaitable<DeliveryOutcome> AgentSession::deliver_encoded(std::string request) {
    // Everything that does not wait is in plain functions, and the frame
    // holds one outcome: with the failure paths' outcomes and strings as
    // temporaries here the frame was over 1 kB, past glibc's per-thread
    // cache, for every delivery.
    if (!ready_to_write()) co_return not_writable();
    if (!co_await conv_->write(std::move(request), timeouts_.write)) co_return write_failed();
    DeliveryOutcome o = co_await read_reply();
    close();
    co_return std::move(o); // a template return_value would copy a named outcome
}

bool AgentSession::ready_to_write() {
    if (!conv_ || !conv_->is_open()) return false;
    // Stock's stream has one buffer for both directions: turning to write
    // the request drops whatever the agent sent after its announcement that
    // was already read.
    conv_->pending().clear();
    return true;
}

DeliveryOutcome AgentSession::not_writable() {
    if (!conv_)
        return failed(DeliveryOutcome::Kind::unavailable,
                      "write to process (" + transport() + "): session is not open");
    // A session whose announcement ended in EOF has a closed socket: the
    // request cannot go out.
    close();
    return failed(DeliveryOutcome::Kind::unavailable,
                  "write to process (" + transport() + "): Broken pipe");
}

DeliveryOutcome AgentSession::write_failed() {
    DeliveryOutcome o = failed(DeliveryOutcome::Kind::unavailable,
                               "write to process (" + transport() + "): " + conv_->error());
    close();
    return o;
}

awaitable<DeliveryOutcome> AgentSession::read_reply() {
    AttrScan scan(reply_items, path_ + " socket");
    // Stock gives up on the whole process when no reply starts in time; we
    // defer this delivery.
    if (!co_await run_scan(scan, timeouts_.reply))
        co_return failed(DeliveryOutcome::Kind::crashed, path_ + " socket: timeout");
    co_return outcome_of(scan);
}

DeliveryOutcome AgentSession::outcome_of(AttrScan& scan) const {
    // Stock needs every attribute up to the status; a failure at the
    // terminator (an attribute too many) leaves the reply standing.
    if (scan.failed() || scan.converted() < std::size(reply_items)) {
        DeliveryOutcome o =
            failed(DeliveryOutcome::Kind::crashed, path_ + " socket: malformed response");
        o.detail = scan.warning();
        return o;
    }
    DeliveryOutcome o;
    o.kind = DeliveryOutcome::Kind::replied;
    o.reply.hop =
        HopStatus{scan.take_value(0), scan.take_value(1), scan.take_value(2), scan.take_value(3),
                  scan.take_value(4), scan.take_value(5), scan.take_value(6)};
    o.reply.status = scan.number(reply_status);
    o.detail = scan.warning();
    return o;
}

awaitable<DeliveryOutcome> deliver_once(std::string path, DeliveryRequest request,
                                        DeliveryTimeouts timeouts) {
    AgentSession s(co_await asio::this_coro::executor);
    if (!co_await s.open(std::move(path), timeouts)) co_return s.failure();
    co_return co_await s.deliver(std::move(request));
}

} // namespace cqmgr::protocol
