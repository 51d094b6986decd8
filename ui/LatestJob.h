#pragma once
// The one way ui/ runs work off the GUI thread: a LatestJob<T> owns the QFutureWatcher, the
// generation counter and the coalescing every view used to copy. Only the newest request matters:
//  - request() while a job runs asks that job to stop (its cancel flag, which core code reads as
//    PassOptions::cancel, and QPromise cancellation) and drops its result; the newest request
//    waits and starts when the worker returns (requests in between never run);
//  - isBusy() holds from request() until the newest result has been delivered, so a caller that
//    asks right after a fast job returned still sees "busy" until the view shows the result;
//  - cancel() drops everything and stops the running job; nothing is delivered.
// deliver/fail run on the GUI thread (the thread that owns the LatestJob).
#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QString>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace passlens::ui {

/// What a running job sees: whether it should stop, and a way to report progress.
class JobControl {
public:
    JobControl(std::shared_ptr<std::atomic<bool>> stop, std::function<bool()> promiseCancelled,
               std::function<void(int, int)> range, std::function<void(int)> value)
        : stop_(std::move(stop)), promiseCancelled_(std::move(promiseCancelled)), range_(std::move(range)),
          value_(std::move(value)) {}
    /// The flag to hand to core (PassOptions::cancel): set when the job is superseded or cancelled.
    const std::atomic<bool>* cancelFlag() const { return stop_.get(); }
    bool cancelled() const { return stop_->load() || promiseCancelled_(); }
    void setProgressRange(int minimum, int maximum) const { range_(minimum, maximum); }
    void setProgressValue(int value) const { value_(value); }

private:
    std::shared_ptr<std::atomic<bool>> stop_;
    std::function<bool()> promiseCancelled_;
    std::function<void(int, int)> range_;
    std::function<void(int)> value_;
};

/// The signals of LatestJob<T> (a class template cannot declare signals).
class LatestJobSignals : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

signals:
    void busyChanged(bool busy);
    /// Progress of the newest job (JobControl::setProgressRange / setProgressValue).
    void progressRangeChanged(int minimum, int maximum);
    void progressValueChanged(int value);
};

template <class T>
class LatestJob final : public LatestJobSignals {
public:
    using Work = std::function<T(const JobControl&)>;
    using Deliver = std::function<void(T)>;
    using Fail = std::function<void(const QString&)>;

    explicit LatestJob(QObject* parent = nullptr) : LatestJobSignals(parent) {
        connect(&watcher_, &QFutureWatcher<T>::finished, this, [this] { onFinished(); });
        connect(&watcher_, &QFutureWatcher<T>::progressRangeChanged, this, [this](int lo, int hi) {
            if (running_ && running_->generation == generation_) emit progressRangeChanged(lo, hi);
        });
        connect(&watcher_, &QFutureWatcher<T>::progressValueChanged, this, [this](int v) {
            if (running_ && running_->generation == generation_) emit progressValueChanged(v);
        });
    }
    /// Stops the running job and waits for it: the worker never outlives its receiver.
    ~LatestJob() override {
        if (!running_) return;
        stopRunning();
        watcher_.waitForFinished();
    }
    LatestJob(const LatestJob&) = delete;
    LatestJob& operator=(const LatestJob&) = delete;

    /// Runs `work` on the thread pool and hands its result to `deliver`, unless a newer request or
    /// cancel() comes first. When `work` throws, `fail` gets the message (nothing is dropped).
    void request(Work work, Deliver deliver, Fail fail = {}) {
        pending_ = Request{std::move(work), std::move(deliver), std::move(fail), ++generation_, nullptr};
        if (running_) {
            stopRunning();  // superseded: its result will be dropped, let it end early
            setBusy(true);
            return;
        }
        startPending();
    }
    /// Drops the waiting request and the running job's result, and asks that job to stop.
    void cancel() {
        ++generation_;
        pending_.reset();
        if (running_) stopRunning();
        setBusy(false);
    }
    /// Asks the running job to stop but keeps its result: the job returns what it has (e.g. a
    /// pipeline run marked cancelled) and it is delivered as usual.
    void stop() {
        if (running_) running_->stop->store(true);
    }
    /// From request() until the newest result is delivered (or cancel()).
    bool isBusy() const { return busy_; }
    /// A worker is running (possibly one whose result will be dropped).
    bool isRunning() const { return running_.has_value(); }
    /// Bumps on every request and cancel; a job's result is delivered only if it is still current.
    quint64 generation() const { return generation_; }
    /// Blocks until the running worker returns (tests, shutdown); delivery still goes through the
    /// event loop.
    void waitForFinished() {
        if (running_) watcher_.waitForFinished();
    }

private:
    struct Request {
        Work work;
        Deliver deliver;
        Fail fail;
        quint64 generation = 0;
        std::shared_ptr<std::atomic<bool>> stop;
        std::shared_ptr<std::exception_ptr> error = std::make_shared<std::exception_ptr>();
    };

    void startPending() {
        Request job = std::move(*pending_);
        pending_.reset();
        job.stop = std::make_shared<std::atomic<bool>>(false);
        auto stop = job.stop;
        auto error = job.error;
        Work work = std::move(job.work);
        running_ = std::move(job);
        setBusy(true);
        watcher_.setFuture(QtConcurrent::run([work = std::move(work), stop, error](QPromise<T>& promise) {
            JobControl control(
                stop, [&promise] { return promise.isCanceled(); },
                [&promise](int lo, int hi) { promise.setProgressRange(lo, hi); },
                [&promise](int v) { promise.setProgressValue(v); });
            try {
                promise.addResult(work(control));
            } catch (...) {
                *error = std::current_exception();  // handed to fail() on the GUI thread
            }
        }));
    }

    void stopRunning() {
        running_->stop->store(true);
        watcher_.cancel();
    }

    void onFinished() {
        if (!running_) return;
        Request done = std::move(*running_);
        running_.reset();
        const bool current = done.generation == generation_;
        if (current && *done.error) {
            QString message = "unknown error";
            try {
                std::rethrow_exception(*done.error);
            } catch (const std::exception& e) {
                message = QString::fromStdString(e.what());
            } catch (...) {
                message = "a background job threw a non-standard exception";
            }
            setBusy(pending_.has_value());
            if (done.fail) done.fail(message);
            else qWarning("LatestJob: background job failed: %s", qPrintable(message));
        } else if (current && watcher_.future().resultCount() > 0) {
            // A copy, not takeResult(): taking leaves the shared future state unfinished.
            T result = watcher_.future().resultAt(0);
            setBusy(pending_.has_value());
            done.deliver(std::move(result));
        }
        // deliver() may have made a request, which started at once (nothing was running).
        if (pending_ && !running_) startPending();
        else setBusy(running_.has_value() || pending_.has_value());
    }

    void setBusy(bool busy) {
        if (busy == busy_) return;
        busy_ = busy;
        emit busyChanged(busy);
    }

    QFutureWatcher<T> watcher_;
    std::optional<Request> running_;
    std::optional<Request> pending_;
    quint64 generation_ = 0;
    bool busy_ = false;
};

}  // namespace passlens::ui
