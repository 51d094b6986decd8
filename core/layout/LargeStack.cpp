#include "layout/LargeStack.h"

#include <pthread.h>

#include <exception>

namespace passlens::layout {

namespace {

struct Job {
    const std::function<void()>* fn;
    std::exception_ptr error;
};

void* trampoline(void* arg) {
    auto* job = static_cast<Job*>(arg);
    try {
        (*job->fn)();
    } catch (...) {
        job->error = std::current_exception();
    }
    return nullptr;
}

}  // namespace

void runOnLargeStack(const std::function<void()>& fn, size_t stackBytes) {
    Job job{&fn, nullptr};
    pthread_attr_t attr;
    bool started = false;
    pthread_t thread{};
    if (pthread_attr_init(&attr) == 0) {
        if (pthread_attr_setstacksize(&attr, stackBytes) == 0)
            started = pthread_create(&thread, &attr, &trampoline, &job) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) return fn();  // no thread to be had (resource limits): run here rather than fail
    pthread_join(thread, nullptr);
    if (job.error) std::rethrow_exception(job.error);
}

}  // namespace passlens::layout
