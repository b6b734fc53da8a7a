// encode_delivery_request against the request as it was built before it
// was encoded straight from the message: every field copied into a
// protocol::DeliveryRequest, then DeliveryRequest::encode().  The bytes on
// the wire must be the same, for plain, VERP, UTF-8 and many-recipient
// entries.
#include "address.hpp"
#include "delivery_request.hpp"

#include <gtest/gtest.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;

namespace {
// The request field by field, as the daemon built it before (the oracle).
protocol::DeliveryRequest reference(const Message& m, const core::Entry& e, bool smtputf8_enable) {
    const auto& env = m.env;
    const core::Queue& q = *e.queue;
    protocol::DeliveryRequest req;
    req.flags = env.tflags | q.dflags |
                (env.inspect() ? protocol::del_flag::bounce : protocol::del_flag::deflt);
    req.queue_id = m.id;
    req.data_offset = env.data_offset;
    req.data_size = env.cont_length;
    req.nexthop = q.nexthop;
    req.encoding = env.encoding();
    req.smtputf8 = env.smtputf8;
    req.sender = env.verp_delims() && !e.rcpts.empty()
                     ? verp_sender(*env.sender(), *env.verp_delims(), e.rcpts[0].orig_rcpt(),
                                   e.rcpts[0].address())
                     : *env.sender();
    req.envelope_id = env.dsn_envid();
    req.ret_flags = env.dsn_ret;
    req.stats.incoming_arrival = {env.arrival_sec, env.arrival_usec};
    req.stats.active_arrival = m.active_arrival;
    req.log_client_name = env.client_name();
    req.log_client_address = env.client_addr();
    req.log_client_port = env.client_port();
    req.log_protocol_name = env.client_proto();
    req.log_helo_name = env.client_helo();
    req.sasl_method = env.sasl_method();
    req.sasl_username = env.sasl_username();
    req.sasl_sender = env.sasl_sender();
    req.log_ident = env.log_ident();
    req.rewrite_context = env.rewrite_context();
    for (const auto& r : e.rcpts) {
        req.recipients.push_back({std::string(r.orig_rcpt()), std::string(r.address()), r.offset(),
                                  std::string(r.dsn_orcpt()), r.notify_flags()});
        // (Any byte above 0x7f: the tests use well-formed UTF-8 only.)
        bool utf8 = false;
        for (unsigned char c : r.address())
            utf8 |= c >= 0x80;
        if (smtputf8_enable && utf8) {
            req.smtputf8 |= 8;
            if (env.verp_delims()) req.smtputf8 |= 4;
        }
    }
    return req;
}

// A message with every envelope field that goes into a request set.
Message full_message() {
    Message m;
    m.id = "4XyZ1a2B3c";
    auto& env = m.env;
    env.text.set(queuefile::EnvelopeText::sender, "sender@example.org");
    env.tflags = protocol::del_flag::record;
    env.data_offset = 612;
    env.cont_length = 1480;
    env.text.set(queuefile::EnvelopeText::encoding, "8BITMIME");
    env.smtputf8 = 1;
    env.text.set(queuefile::EnvelopeText::dsn_envid, "envid-17");
    env.dsn_ret = 2;
    env.arrival_sec = 1764000000;
    env.arrival_usec = 123456;
    env.text.set(queuefile::EnvelopeText::client_name, "client.example.net");
    env.text.set(queuefile::EnvelopeText::client_addr, "192.0.2.7");
    env.text.set(queuefile::EnvelopeText::client_port, "40123");
    env.text.set(queuefile::EnvelopeText::client_proto, "ESMTP");
    env.text.set(queuefile::EnvelopeText::client_helo, "helo.example.net");
    env.text.set(queuefile::EnvelopeText::sasl_method, "PLAIN");
    env.text.set(queuefile::EnvelopeText::sasl_username, "user");
    env.text.set(queuefile::EnvelopeText::sasl_sender, "owner@example.org");
    env.text.set(queuefile::EnvelopeText::log_ident, "4XyZ1a2B3c");
    env.text.set(queuefile::EnvelopeText::rewrite_context, "remote");
    m.active_arrival = {1764000005, 654321};
    return m;
}

core::Recipient rcpt(int64_t offset, std::string address, std::string orig = "",
                     std::string dsn = "", int notify = 0) {
    return core::Recipient{offset, std::move(address), std::move(orig), std::move(dsn), notify};
}

void expect_same(const Message& m, const core::Entry& e) {
    for (bool enable : {false, true})
        EXPECT_EQ(encode_delivery_request(m, e, enable), reference(m, e, enable).encode())
            << "smtputf8_enable " << enable;
}

// The same through `cache`, appended to what `out` holds.
void expect_same_cached(RequestHeadCache& cache, const Message& m, const core::Entry& e) {
    std::string out = "previous";
    encode_delivery_request(out, m, e, true, &cache);
    EXPECT_EQ(out, "previous" + reference(m, e, true).encode());
    EXPECT_TRUE(cache.holds(m));
}
} // namespace

TEST(DeliveryRequest, SameBytesAsTheStructForAPlainEntry) {
    Message m = full_message();
    core::Queue q;
    q.nexthop = "example.com";
    q.dflags = protocol::del_flag::conn_load;
    core::Entry e;
    e.message = &m;
    e.queue = &q;
    e.rcpts.push_back(rcpt(800, "a@example.com", "A@Example.com", "rfc822;a@example.com", 6));
    expect_same(m, e);
}

TEST(DeliveryRequest, NoSessionStoreAsksOnlyToLoadSessions) {
    // Under a concurrency limit that stands for the receiver's sessions,
    // the agent may reuse a cached session but is not asked to keep one.
    Message m = full_message();
    core::Queue q;
    q.nexthop = "example.com";
    q.dflags = protocol::del_flag::conn_load | protocol::del_flag::conn_store;
    core::Entry e;
    e.message = &m;
    e.queue = &q;
    e.rcpts.push_back(rcpt(800, "a@example.com"));
    std::string out;
    encode_delivery_request(out, m, e, true, nullptr, true);
    q.dflags = protocol::del_flag::conn_load;
    EXPECT_EQ(out, reference(m, e, true).encode());
    q.dflags |= protocol::del_flag::conn_store;
    EXPECT_NE(out, reference(m, e, true).encode());
}

TEST(DeliveryRequest, SameBytesWithDefaultsAndInspection) {
    Message m;
    m.id = "ABC";
    m.env.text.set(queuefile::EnvelopeText::sender, "");
    m.env.text.set(queuefile::EnvelopeText::inspect, "filter:dummy");
    core::Queue q;
    core::Entry e;
    e.message = &m;
    e.queue = &q;
    e.rcpts.push_back(rcpt(90, "b@example.com"));
    expect_same(m, e);
}

TEST(DeliveryRequest, SameBytesForManyRecipients) {
    Message m = full_message();
    core::Queue q;
    q.nexthop = "[192.0.2.1]:25";
    core::Entry e;
    e.message = &m;
    e.queue = &q;
    for (int i = 0; i < 50; ++i)
        e.rcpts.push_back(rcpt(1000 + 40 * i, "user" + std::to_string(i) + "@example.com",
                               i % 3 ? "" : "orig" + std::to_string(i) + "@example.com",
                               i % 5 ? "" : "rfc822;x@example.com", i % 16));
    expect_same(m, e);
}

TEST(DeliveryRequest, SameBytesForVerpAndUtf8) {
    Message m = full_message();
    m.env.text.set(queuefile::EnvelopeText::verp_delims, "+=");
    core::Queue q;
    q.nexthop = "example.com";
    core::Entry e;
    e.message = &m;
    e.queue = &q;
    e.rcpts.push_back(rcpt(700, "j\xc3\xb6rg@example.com", "j\xc3\xb6rg@example.com"));
    expect_same(m, e);
    m.env.text.reset(queuefile::EnvelopeText::verp_delims);
    expect_same(m, e);
    // A value with a NUL is cut there by both.
    e.rcpts[0].set_address(std::string_view("cut\0here@example.com", 20));
    expect_same(m, e);
}

TEST(DeliveryRequest, SameBytesForAnEmptyEntry) {
    Message m = full_message();
    m.env.text.set(queuefile::EnvelopeText::verp_delims, "+=");
    core::Queue q;
    core::Entry e;
    e.message = &m;
    e.queue = &q;
    expect_same(m, e);
}

// The runs kept from a message's last request serve its next entries (other
// queues, other recipients, VERP senders), and never another message's,
// also one at the same address after forget().
TEST(DeliveryRequest, KeptRunsGiveTheSameBytes) {
    RequestHeadCache cache;
    Message m = full_message();
    Message other = full_message();
    other.id = "5QqQ9z8Y7x";
    other.env.text.set(queuefile::EnvelopeText::client_name, "elsewhere.example.net");
    other.active_arrival = {1764000099, 1};
    core::Queue q1, q2;
    q1.nexthop = "example.com";
    q2.nexthop = "[192.0.2.1]:25";
    q2.dflags = protocol::del_flag::conn_load;
    core::Entry e1, e2, e3;
    e1.message = e2.message = &m;
    e3.message = &other;
    e1.queue = &q1;
    e2.queue = e3.queue = &q2;
    e1.rcpts.push_back(rcpt(800, "a@example.com", "A@Example.com", "rfc822;a@example.com", 6));
    e2.rcpts.push_back(rcpt(840, "j\xc3\xb6rg@example.net"));
    e2.rcpts.push_back(rcpt(880, "b@example.net"));
    e3.rcpts.push_back(rcpt(900, "c@example.org"));
    EXPECT_FALSE(cache.holds(m));
    expect_same_cached(cache, m, e1); // kept
    expect_same_cached(cache, m, e2); // reused
    expect_same_cached(cache, m, e1);
    expect_same_cached(cache, other, e3); // another message: its own
    EXPECT_FALSE(cache.holds(m));
    expect_same_cached(cache, m, e2);
    m.env.text.set(queuefile::EnvelopeText::verp_delims, "+=");
    expect_same_cached(cache, m, e1); // the sender is the entry's
    // A message destroyed, and another one made where it was: the cache
    // was told, and would see the queue id anyway.
    cache.forget(m);
    EXPECT_FALSE(cache.holds(m));
    expect_same_cached(cache, m, e1);
    m.~Message();
    ::new (&m) Message(full_message());
    m.id = "6RrR0a9Z8y";
    EXPECT_FALSE(cache.holds(m));
    expect_same_cached(cache, m, e1);
}
