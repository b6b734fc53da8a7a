// A text table with aligned columns, as cqmgrctl prints its replies: a
// header row in capitals, numbers right-aligned, text left-aligned, two
// spaces between columns, and the last column left ragged (reason texts may
// be long; they are never padded).
#pragma once

#include <string>
#include <vector>

namespace cqmgr::ctl {

class Table {
  public:
    enum class Align { Left, Right };
    struct Column {
        std::string title;
        Align align = Align::Left;
    };

    explicit Table(std::vector<Column> columns);

    // Appends a row; missing cells are empty, extra cells are ignored.
    void add(std::vector<std::string> cells);
    bool empty() const { return rows_.empty(); }
    size_t rows() const { return rows_.size(); }

    // The header and the rows, one string per line, without trailing spaces.
    std::vector<std::string> lines() const;
    // lines() joined, each ending in '\n'.
    std::string text() const;

  private:
    // One row, padded to the column widths.
    std::string render(const std::vector<std::string>& cells,
                       const std::vector<size_t>& widths) const;

    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// The display width of UTF-8 text: code points, not bytes (reason texts and
// addresses may carry UTF-8; wide characters count as one, which is close
// enough for a status table).
size_t display_width(const std::string& text);
// `text` cut to at most `width` display columns.
std::string fit_width(const std::string& text, size_t width);

} // namespace cqmgr::ctl
