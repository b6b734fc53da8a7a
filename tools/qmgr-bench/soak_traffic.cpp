#include "soak_traffic.hpp"

#include <algorithm>
#include <charconv>
#include <random>

namespace bench {

// The weights favour healthy destinations, as real traffic does; the dead
// one gets enough to build a backlog over the run, and Many a new
// destination almost every second.
const std::vector<SoakDestInfo>& soak_destinations() {
    static const std::vector<SoakDestInfo> d = {
        {SoakDest::Fast, "fast", "smtp", 40},         {SoakDest::Slow, "slow", "relay", 15},
        {SoakDest::Tarpit, "tarpit", "smtp", 3},      {SoakDest::Flap, "flap", "smtp", 10},
        {SoakDest::Random4xx, "random", "relay", 12}, {SoakDest::Limited, "limited", "relay", 8},
        {SoakDest::Bounce, "bounce", "smtp", 5},      {SoakDest::Dead, "dead", "smtp", 7},
        {SoakDest::Many, "many", "smtp", 8},
    };
    return d;
}

std::string soak_domain(const SoakDestInfo& d) {
    return d.name + ".example";
}

namespace {

// Picks a destination index by weight.
std::size_t pick_destination(std::mt19937_64& rng) {
    const auto& ds = soak_destinations();
    int total = 0;
    for (const auto& d : ds)
        total += d.weight;
    int r = std::uniform_int_distribution<int>(0, total - 1)(rng);
    for (std::size_t i = 0; i < ds.size(); ++i) {
        if (r < ds[i].weight) return i;
        r -= ds[i].weight;
    }
    return 0;
}

// A recipient u<K>@DOMAIN; forty mailboxes per domain, so that addresses
// repeat across messages (what the resolve cache keeps). Many's domain is
// dX-Y.many.example, drawn anew each time.
SoakRecipient recipient(const SoakDestInfo& d, int k, std::mt19937_64& rng) {
    std::string domain = soak_domain(d);
    if (d.dest == SoakDest::Many) {
        std::uniform_int_distribution<int> part(1, soak_many_parts);
        int x = part(rng);
        domain = "d" + std::to_string(x) + "-" + std::to_string(part(rng)) + "." + domain;
    }
    return {"u" + std::to_string(k) + "@" + domain, d.dest == SoakDest::Bounce};
}

} // namespace

SoakMessage soak_message(std::uint64_t n, bool with_text) {
    // One generator per message, seeded by its number alone.
    std::mt19937_64 rng(0x9e3779b97f4a7c15ULL ^ (n * 0xbf58476d1ce4e5b9ULL));
    const auto& ds = soak_destinations();
    SoakMessage m;
    std::uniform_int_distribution<int> mailbox(0, 39), percent(0, 99);
    if (n % 300 < 15) {
        // A burst for the receiver that allows three connections at once.
        auto it = std::find_if(ds.begin(), ds.end(),
                               [](const auto& d) { return d.dest == SoakDest::Limited; });
        m.recipients.push_back(recipient(*it, mailbox(rng), rng));
    } else if (n % 499 == 498) {
        for (const auto& d : ds)
            for (int k = 0; k < 2; ++k)
                m.recipients.push_back(recipient(d, k, rng));
    } else {
        int p = percent(rng);
        int count = p < 60 ? 1 : p < 90 ? 2 : 3;
        while (static_cast<int>(m.recipients.size()) < count) {
            const auto& d = ds[pick_destination(rng)];
            int k = mailbox(rng);
            auto r = recipient(d, k, rng);
            if (std::none_of(m.recipients.begin(), m.recipients.end(),
                             [&](const auto& x) { return x.address == r.address; }))
                m.recipients.push_back(r);
        }
    }
    int lane = percent(rng);
    m.sender = lane < 3    ? "alerts@sender.example"
               : lane < 23 ? "news@sender.example"
                           : "soak@sender.example";
    bool x_priority = percent(rng) < 2;
    std::size_t size =
        percent(rng) == 0 ? 100000 : std::uniform_int_distribution<std::size_t>(200, 8000)(rng);
    if (!with_text) return m;
    std::string t = "From: <" + m.sender + ">\nTo: undisclosed-recipients:;\nSubject: soak " +
                    std::to_string(n) + "\nMessage-ID: " + soak_message_id(n) + "\n";
    if (x_priority) t += "X-Priority: 1\n";
    t += "\n";
    static const std::string line(71, 'x');
    while (t.size() < size)
        t += line + "\n";
    m.text = std::move(t);
    return m;
}

std::string soak_message_id(std::uint64_t n) {
    return "<soak-" + std::to_string(n) + "@bench.example>";
}

std::optional<std::uint64_t> soak_message_number(std::string_view text) {
    static constexpr std::string_view prefix = "message-id=<soak-";
    static constexpr std::string_view suffix = "@bench.example>";
    if (!text.starts_with(prefix)) return std::nullopt;
    text.remove_prefix(prefix.size());
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || std::string_view(end, text.data() + text.size() - end) != suffix)
        return std::nullopt;
    return n;
}

} // namespace bench
