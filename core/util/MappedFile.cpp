#include "util/MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/Error.h"

namespace passlens {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throwBadInput("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throwBadInput("'" + path + "' is not a regular file");
    }
    std::shared_ptr<MappedFile> f(new MappedFile());
    f->size_ = static_cast<size_t>(st.st_size);
    if (f->size_ > 0) {
        void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            ::close(fd);
            throwBadInput("cannot map '" + path + "': " + std::strerror(errno));
        }
        f->map_ = p;
        f->data_ = static_cast<const std::byte*>(p);
    }
    ::close(fd);
    return f;
}

MappedFile::~MappedFile() {
    if (map_) ::munmap(map_, size_);
}

}  // namespace passlens
