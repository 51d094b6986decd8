#pragma once
// Read-only memory mapping of a whole file; shared so tensor Buffers can keep it alive.
#include <cstddef>
#include <memory>
#include <string>

namespace passlens {

class MappedFile {
public:
    /// Throws Error(BadInput) naming the path when it cannot be opened or mapped.
    static std::shared_ptr<const MappedFile> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::byte* data() const { return data_; }
    size_t size() const { return size_; }

private:
    MappedFile() = default;
    const std::byte* data_ = nullptr;
    size_t size_ = 0;
    void* map_ = nullptr;
};

}  // namespace passlens
