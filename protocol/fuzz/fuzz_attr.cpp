// libFuzzer target for the attribute decoder in all three formats.
// Input: byte 0 picks the format (b % 3) and how the rest is cut into chunks
// (b / 3); the rest is what a peer sends.  Besides the sanitizers it checks:
//   * chunked decoding gives exactly the lists, status and error of decoding
//     the same bytes in one piece;
//   * every decoded list respects the limits (lengths, count, depth);
//   * re-encoding a decoded list in its format decodes to the same list;
//   * every error says what was expected;
//   * the typed decoders accept or reject any list without crashing;
//   * the strict scan (null format, a delivery reply's attributes) gives the
//     same verdict, consumption, values and warning however the bytes are
//     cut, its warning is printable, and its number rule is sscanf's.
#include "cqmgr/protocol/attr.hpp"
#include "cqmgr/protocol/attr_scan.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace cqmgr::protocol;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

struct Decoded {
    std::vector<AttrList> lists;
    AttrParser::Status last = AttrParser::Status::need_more;
    std::string error;
};

// Small limits, so that the fuzzer reaches them.
AttrLimits limits() {
    AttrLimits l;
    l.max_name = 32;
    l.max_value = 64;
    l.max_attrs = 16;
    l.max_table_entries = 8;
    return l;
}

// Decodes `wire` cut into chunks whose sizes cycle through `pattern`
// (0 = the whole rest at once).
Decoded decode(AttrFormat f, std::string_view wire, const std::vector<size_t>& pattern) {
    Decoded d;
    AttrParser p(f, limits());
    size_t k = 0;
    while (!wire.empty() && d.last != AttrParser::Status::error) {
        size_t n = pattern[k++ % pattern.size()];
        if (n == 0 || n > wire.size()) n = wire.size();
        std::string_view chunk = wire.substr(0, n);
        // A chunk may hold several lists: drain it.
        for (;;) {
            AttrList out;
            d.last = p.parse(chunk, out);
            if (d.last == AttrParser::Status::list) {
                d.lists.push_back(std::move(out));
                if (chunk.empty()) break;
                continue;
            }
            if (d.last == AttrParser::Status::error) d.error = p.error();
            else if (!chunk.empty()) finding("need_more with input left over");
            break;
        }
        wire.remove_prefix(n);
    }
    // After the last complete list, an empty rest is "need_more" either way.
    if (d.last == AttrParser::Status::list) d.last = AttrParser::Status::need_more;
    return d;
}

// Checks the limits on one list (or table), recursively.
size_t check_limits(const std::vector<Attr>& attrs, size_t depth) {
    const AttrLimits l = limits();
    if (depth > l.max_depth) finding("table nested deeper than the limit");
    if (depth > 0 && attrs.size() > l.max_table_entries) finding("table larger than the limit");
    size_t count = 0;
    for (const auto& a : attrs) {
        ++count;
        if (a.is_table) {
            if (a.name != "{" || !a.value.empty()) finding("table attribute with a name or value");
            count += check_limits(a.table, depth + 1);
        } else {
            if (a.name.empty()) finding("attribute with an empty name");
            if (a.name.size() > l.max_name || a.value.size() > l.max_value)
                finding("name or value longer than the limit");
            if (!a.table.empty()) finding("plain attribute with table entries");
        }
    }
    return count;
}

// A delivery reply's attributes, with a fixed value at the end so that every
// kind of item is reached.
constexpr ScanItem scan_items[] = {
    {ScanItem::Kind::str, "status"},
    {ScanItem::Kind::str, "reason"},
    {ScanItem::Kind::num, "status"},
    {ScanItem::Kind::streq, "protocol", "x"},
};

struct Scanned {
    bool done = false, failed = false;
    size_t converted = 0, consumed = 0;
    std::string warning;
    std::vector<std::string> values;
    bool operator==(const Scanned&) const = default;
};

// Scans `wire` cut into chunks whose sizes cycle through `pattern`, then
// ends the input (as a closed peer) if the scan is not done.
Scanned scan(std::string_view wire, const std::vector<size_t>& pattern) {
    AttrScan s(scan_items, "S", 64);
    Scanned r;
    size_t k = 0;
    while (!s.done() && r.consumed < wire.size()) {
        size_t n = pattern[k++ % pattern.size()];
        if (n == 0 || n > wire.size() - r.consumed) n = wire.size() - r.consumed;
        std::string_view chunk = wire.substr(r.consumed, n);
        size_t before = chunk.size();
        auto st = s.feed(chunk);
        r.consumed += before - chunk.size();
        if (st == AttrScan::Status::need_more && !chunk.empty()) finding("scan left input unread");
    }
    s.end(false);
    r.done = s.done();
    r.failed = s.failed();
    r.converted = s.converted();
    r.warning = s.warning();
    for (size_t i = 0; i < r.converted; ++i)
        r.values.push_back(s.value(i));
    return r;
}

// The strict scan's invariants on `wire`.
void check_scan(std::string_view wire, unsigned cut) {
    Scanned whole = scan(wire, {0});
    if (scan(wire, {1u + cut % 7, 1u + cut % 3, 1u + cut}) != whole || scan(wire, {1}) != whole)
        finding("chunking changed the strict scan");
    if (!whole.done) finding("a scan not done after the end of input");
    for (unsigned char c : whole.warning)
        if (c < 0x20 || c == 0x7f) finding("a warning that is not printable");
    if (printable(whole.warning) != whole.warning) finding("printable() is not idempotent");
    if (whole.converted > std::size(scan_items)) finding("more conversions than items");
    // The number rule against the C library, on every NUL-free value.
    for (const auto& v : whole.values) {
        if (v.find('\0') != std::string::npos) continue;
        unsigned n = 0;
        char junk = 0;
        bool c_ok = std::sscanf(v.c_str(), "%u%c", &n, &junk) == 1 && junk == 0;
        auto ours = scan_unsigned(v);
        if (ours.has_value() != c_ok || (ours && *ours != n))
            finding("scan_unsigned disagrees with sscanf");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const AttrFormat f = static_cast<AttrFormat>(data[0] % 3);
    const unsigned cut = data[0] / 3;
    std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);

    if (f == AttrFormat::null) check_scan(wire, cut);

    Decoded whole = decode(f, wire, {0});
    std::vector<size_t> pattern = {1u + cut % 7, 1u + cut % 3, 1u + cut};
    Decoded chunked = decode(f, wire, pattern);
    Decoded bytewise = decode(f, wire, {1});
    for (const Decoded* other : {&chunked, &bytewise}) {
        if (other->lists != whole.lists) finding("chunking changed the decoded lists");
        if (other->last != whole.last) finding("chunking changed the final status");
        if (other->error != whole.error) finding("chunking changed the error");
    }
    if (whole.last == AttrParser::Status::error && whole.error.rfind("expected ", 0) != 0)
        finding("an error that does not say what was expected");

    for (const auto& list : whole.lists) {
        if (check_limits(list.attrs, 0) > limits().max_attrs) finding("more attributes than the limit");
        std::string again = encode_list(list, f);
        auto round = decode_one(again, f, limits());
        if (!round) finding("a decoded list does not re-encode to a decodable list");
        if (*round != list) finding("re-encoding changed the list");
        // The typed decoders must cope with anything.
        (void)decode_delivery_reply(list);
        (void)decode_resolve_reply(list);
        (void)decode_rewrite_reply(list);
        (void)decode_status_reply(list);
        (void)is_announcement(list, delivery_protocol);
        (void)list.describe_names();
        for (const auto& a : list.attrs) {
            (void)parse_int(a.value);
            (void)parse_long(a.value);
            (void)dsn_status_valid(a.value);
        }
    }
    return 0;
}
