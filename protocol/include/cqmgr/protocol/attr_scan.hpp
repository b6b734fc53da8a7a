// Reads one null-format attribute list the way Postfix's strict attr_scan
// does: attributes in the order the caller expects them, stopping at the
// first one that is not what was expected, and saying what was wrong in the
// words a stock daemon logs (docs/compatibility.md, "Malformed agent
// replies").  It consumes exactly the bytes stock would consume, so that
// what follows in the stream is read by the next scan as stock reads it.
//
//   AttrScan scan(items, "private/smtp socket");
//   while (scan.feed(bytes) == AttrScan::Status::need_more) ... read more ...
//   or, when the peer closed or went quiet: scan.end(timed_out);
//   scan.failed(), scan.converted(), scan.warning(), scan.value(i) ...
//
// Stock's verdict has two parts, as attr_scan's return value has: failed()
// (it returned -1: the input ended, a number or a fixed value was wrong),
// and converted() (how many of the expected attributes it read; a missing
// or unexpected attribute stops the scan without failing it).  Whether that
// is good enough is the caller's decision, as it is for stock's callers.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::protocol {

// One attribute the caller expects, in order.
struct ScanItem {
    enum class Kind {
        str,   // any string value
        num,   // an unsigned number as C's sscanf("%u") reads it
        streq, // exactly `expect`; not counted in converted()
    };
    Kind kind;
    std::string_view name;
    std::string_view expect = {};
};

class AttrScan {
  public:
    enum class Status { need_more, done };

    // `items` must outlive the scan, and so must `peer`, the socket's path
    // (e.g. "private/smtp"): warnings name the stream "<peer> socket", as
    // stock does.  A string longer than `max_string` bytes fails the scan
    // (stock has no bound; this one keeps memory bounded).
    AttrScan(std::span<const ScanItem> items, std::string_view peer,
             size_t max_string = 256 * 1024);

    // Consumes from the front of `input` the bytes the scan reads; `done`
    // when the verdict is in (the rest of `input` is not the scan's).
    Status feed(std::string_view& input);
    // The input ended before the scan was done: end of file or a read error
    // (`timed_out` false) or no more bytes in time (`timed_out` true).
    void end(bool timed_out);

    bool done() const { return done_; }
    // True once any byte was consumed.  Stock treats a stream that ends
    // before its first byte as an empty result, without a warning.
    bool started() const { return started_; }
    bool failed() const { return failed_; }
    size_t converted() const { return converted_; }
    // What stock logs about the input (as its logger prints it: non-printable
    // bytes shown as '?'), or empty when the input was as expected.
    const std::string& warning() const { return warning_; }
    // The value of item `i` (str and num items that were converted).
    const std::string& value(size_t i) const { return values_[i]; }
    // The same, moved out of the scan.
    std::string take_value(size_t i) { return std::move(values_[i]); }
    // The number of num item `i`, as the C int stock stores it.
    int32_t number(size_t i) const { return numbers_[i]; }

  private:
    // Handles one complete string (its NUL is not in `s`).
    void on_string(std::string_view s);
    // Ends the scan with `warning`; `failed` as attr_scan returning -1.
    void stop(std::string warning, bool failed);
    // The stream's name in warnings (made only for a warning: a scan runs
    // twice per delivery).
    std::string stream() const { return std::string(peer_) + " socket"; }

    std::span<const ScanItem> items_;
    std::string_view peer_;
    size_t max_string_;
    size_t next_ = 0;       // index of the expected item; items_.size(): the terminator
    bool in_value_ = false; // the string being read is the value of items_[next_]
    std::string string_;    // the string being read
    // In place: a reply has eight attributes.
    boost::container::small_vector<std::string, 8> values_;
    boost::container::small_vector<int32_t, 8> numbers_;
    size_t converted_ = 0;
    bool started_ = false;
    bool done_ = false;
    bool failed_ = false;
    std::string warning_;
};

// Postfix's sscanf("%u%c") == 1 test on an attribute value: optional blanks
// and sign, decimal digits, nothing after them; the value wraps as C's
// strtoul does and is then cut to 32 bits.  Nothing when malformed.
std::optional<uint32_t> scan_unsigned(std::string_view text);

// Postfix's printable(): every byte that is not printable ASCII, and not part
// of a UTF-8 sequence, becomes `replacement`.  Its logger applies it to each
// line.
std::string printable(std::string_view text, char replacement = '?');

} // namespace cqmgr::protocol
