// The soak's mail: its destinations (what each receiver does) and the
// messages, each a pure function of its number, so that both sides get the
// same mail and the verdict can list every recipient that was sent without
// keeping the messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

// What a destination's receiver does (see soak.hpp for the receivers).
// Many: a new domain for nearly every recipient (backscatter to
// sender-chosen domains), each its own destination, all received by the
// fast destination's sink.
enum class SoakDest { Fast, Slow, Tarpit, Flap, Random4xx, Limited, Bounce, Dead, Many };

// Many's domains are dX-Y.many.example with X and Y from 1 to this.
constexpr int soak_many_parts = 100;

struct SoakDestInfo {
    SoakDest dest;
    std::string name;      // short name: the sink's, the domain's first label
    std::string transport; // smtp or relay (the latter with finch's shares)
    int weight;            // share of the recipients of ordinary messages
};

// Every destination, in a fixed order.
const std::vector<SoakDestInfo>& soak_destinations();

// NAME.example; for Many, the parent of its domains dX-Y.many.example.
std::string soak_domain(const SoakDestInfo& d);

// One recipient: its address and whether a bounce is its expected end.
struct SoakRecipient {
    std::string address;
    bool bounces = false;
};

// Message number `n` (from 0): sender, recipients and RFC 5322 text.
struct SoakMessage {
    std::string sender;
    std::vector<SoakRecipient> recipients;
    std::string text; // LF line ends, with Message-ID: soak_message_id(n)
};

// Builds message `n`. Most have one to three recipients over the
// destinations by weight; a burst of one-recipient messages for the
// connection-limited destination comes every 300 messages, and a fan-out
// message to every destination every 499. Senders pick the priority lanes
// (urgent, bulk, normal), a few messages carry X-Priority: 1, and sizes
// range from under a kilobyte to 100 kB.
SoakMessage soak_message(std::uint64_t n, bool with_text = true);

// "<soak-N@bench.example>".
std::string soak_message_id(std::uint64_t n);

// N from the text of a cleanup line "message-id=<soak-N@bench.example>", or
// nullopt for any other message (e.g. a bounce notice).
std::optional<std::uint64_t> soak_message_number(std::string_view text);

} // namespace bench
