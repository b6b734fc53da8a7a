#include "cqmgr/protocol/attr_scan.hpp"

#include <limits>

namespace cqmgr::protocol {

namespace {
// What stock calls the expected attribute after the last one.
constexpr std::string_view terminator_name = "(list terminator)";
// How much of a malformed number stock quotes.
constexpr size_t quoted_number = 100;

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
} // namespace

AttrScan::AttrScan(std::span<const ScanItem> items, std::string_view peer, size_t max_string)
    : items_(items), peer_(peer), max_string_(max_string), values_(items.size()),
      numbers_(items.size()) {}

AttrScan::Status AttrScan::feed(std::string_view& input) {
    while (!done_ && !input.empty()) {
        started_ = true;
        size_t nul = input.find('\0');
        std::string_view chunk = input.substr(0, nul);
        if (string_.size() + chunk.size() > max_string_) {
            // Stock reads strings of any length; this bound is ours.  The
            // scan ends at the first byte too many, however the input is cut.
            input.remove_prefix(max_string_ + 1 - string_.size());
            stop("string longer than " + std::to_string(max_string_) + " bytes from " + stream() +
                     " while reading input attribute " + (in_value_ ? "value" : "name"),
                 true);
            break;
        }
        if (nul == std::string_view::npos) {
            string_.append(chunk);
            input.remove_prefix(input.size());
            break;
        }
        input.remove_prefix(nul + 1);
        if (string_.empty()) {
            // The whole string is in this input: no copy on the way.
            on_string(chunk);
        } else {
            string_.append(chunk);
            std::string s = std::move(string_);
            string_.clear();
            on_string(s);
        }
    }
    return done_ ? Status::done : Status::need_more;
}

void AttrScan::on_string(std::string_view s) {
    const bool at_end = next_ == items_.size();
    if (!in_value_) {
        const std::string_view wanted = at_end ? terminator_name : items_[next_].name;
        if (s.empty()) {
            // The list ends here: complete at the terminator, short otherwise.
            if (at_end)
                stop("", false);
            else
                stop("missing attribute " + std::string(wanted) + " in input from " + stream(),
                     false);
        } else if (at_end || s != wanted) {
            stop("unexpected attribute " + std::string(s) + " from " + stream() +
                     " (expecting: " + std::string(wanted) + ")",
                 false);
        } else {
            in_value_ = true;
        }
        return;
    }
    in_value_ = false;
    const ScanItem& item = items_[next_];
    switch (item.kind) {
    case ScanItem::Kind::str:
        values_[next_].assign(s);
        ++converted_;
        break;
    case ScanItem::Kind::num: {
        auto n = scan_unsigned(s);
        if (!n) {
            stop("malformed numerical data from " + stream() +
                     " while reading input attribute value: " +
                     std::string(s.substr(0, quoted_number)),
                 true);
            return;
        }
        numbers_[next_] = static_cast<int32_t>(*n);
        values_[next_].assign(s);
        ++converted_;
        break;
    }
    case ScanItem::Kind::streq:
        if (s != item.expect) {
            stop("unexpected " + std::string(item.name) + " " + std::string(s) + " from " +
                     stream() + " (expected: " + std::string(item.expect) + ")",
                 true);
            return;
        }
        break;
    }
    ++next_;
}

void AttrScan::end(bool timed_out) {
    if (done_) return;
    // Stock looks at the first byte before anything else: a stream that
    // ends there gives an empty result and no warning.
    if (!started_ && !timed_out) {
        stop("", false);
        return;
    }
    const std::string what = in_value_ ? "input attribute value" : "input attribute name";
    // A string cut short is "unexpected"; nothing of the string at all is
    // "premature", or a timeout when that is why nothing came.
    if (!string_.empty())
        stop("unexpected end-of-input from " + stream() + " while reading " + what, true);
    else
        stop(std::string(timed_out ? "timeout" : "premature end-of-input") + " on " + stream() +
                 " while reading " + what,
             true);
}

void AttrScan::stop(std::string warning, bool failed) {
    done_ = true;
    failed_ = failed;
    if (!warning.empty()) warning_ = printable(warning);
    string_.clear();
}

std::optional<uint32_t> scan_unsigned(std::string_view text) {
    size_t i = 0;
    while (i < text.size() && is_blank(text[i]))
        ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    const size_t digits_from = i;
    uint64_t v = 0;
    bool overflow = false;
    constexpr uint64_t max = std::numeric_limits<uint64_t>::max();
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        uint64_t d = static_cast<uint64_t>(text[i] - '0');
        if (v > (max - d) / 10)
            overflow = true;
        else
            v = v * 10 + d;
    }
    if (i == digits_from || i != text.size()) return std::nullopt;
    // strtoul: out of range gives the largest value whatever the sign; a
    // minus sign negates in unsigned arithmetic.  %u keeps the low 32 bits.
    if (overflow)
        v = max;
    else if (negative)
        v = 0 - v;
    return static_cast<uint32_t>(v);
}

std::string printable(std::string_view text, char replacement) {
    std::string out(text);
    for (size_t i = 0; i < out.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(out[i]);
        auto continuation = [&out](size_t at) {
            if (at >= out.size()) return false;
            unsigned char b = static_cast<unsigned char>(out[at]);
            return b >= 0x80 && b < 0xc0;
        };
        if (c >= 0x20 && c < 0x7f) continue;
        if (c >= 0xc2 && c <= 0xfe && continuation(i + 1)) {
            // A UTF-8 lead byte: keep it and every continuation byte after it.
            while (continuation(i + 1))
                ++i;
            continue;
        }
        out[i] = replacement;
    }
    return out;
}

} // namespace cqmgr::protocol
