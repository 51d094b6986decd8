// LatestJob<T> (ui/LatestJob.h), the one background-job helper of ui/: coalescing, stale results
// dropped, cancellation reaching the running job, busy until the newest result is delivered,
// failures reported. Jobs are gated by a semaphore, so the tests decide when a worker returns.
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "LatestJob.h"

using passlens::ui::JobControl;
using passlens::ui::LatestJob;

namespace {

/// Waits until `job` has no worker and its result (if any) went through the event loop.
void settle(LatestJob<int>& job) {
    QTRY_VERIFY_WITH_TIMEOUT(!job.isRunning(), 5000);
    QCoreApplication::processEvents();
}

}  // namespace

class LatestJobTest : public QObject {
    Q_OBJECT

private slots:
    void deliversTheResult() {
        LatestJob<int> job;
        std::vector<int> got;
        job.request([](const JobControl&) { return 42; }, [&](int v) { got.push_back(v); });
        QVERIFY(job.isBusy());
        settle(job);
        QCOMPARE(got, std::vector<int>{42});
        QVERIFY(!job.isBusy());
    }

    // Requests made while a job runs: only the newest runs after it, and only its result arrives.
    void coalescesAndDropsStaleResults() {
        LatestJob<int> job;
        QSemaphore gate;
        std::atomic<int> runs{0};
        std::vector<int> got;
        auto gated = [&](int v) {
            return [&, v](const JobControl&) {
                ++runs;
                gate.acquire();
                return v;
            };
        };
        job.request(gated(1), [&](int v) { got.push_back(v); });
        QTRY_COMPARE_WITH_TIMEOUT(runs.load(), 1, 5000);  // running (a job superseded before it starts never runs)
        job.request(gated(2), [&](int v) { got.push_back(v); });
        job.request(gated(3), [&](int v) { got.push_back(v); });
        gate.release(1);  // the first worker returns: its result is stale, request 3 starts
        QTRY_COMPARE_WITH_TIMEOUT(runs.load(), 2, 5000);
        QVERIFY(job.isBusy());
        QVERIFY(got.empty());
        gate.release(1);
        QTRY_VERIFY_WITH_TIMEOUT(!job.isBusy(), 5000);
        QCOMPARE(got, std::vector<int>{3});
        QCOMPARE(runs.load(), 2);  // request 2 never ran
    }

    // A newer request sets the running job's cancel flag (what core reads as PassOptions::cancel).
    void supersededJobSeesItsCancelFlag() {
        LatestJob<int> job;
        std::atomic<bool> started{false}, sawStop{false};
        job.request(
            [&](const JobControl& c) {
                started = true;
                for (int i = 0; i < 5000 && !c.cancelFlag()->load(); ++i) QThread::msleep(1);
                sawStop = c.cancelled();
                return -1;
            },
            [](int) { QFAIL("a superseded result was delivered"); });
        QTRY_VERIFY_WITH_TIMEOUT(started.load(), 5000);
        int got = 0;
        job.request([](const JobControl& c) { return c.cancelled() ? 0 : 7; }, [&](int v) { got = v; });
        QTRY_COMPARE_WITH_TIMEOUT(got, 7, 5000);
        QVERIFY(sawStop.load());
    }

    void cancelStopsTheJobAndDeliversNothing() {
        LatestJob<int> job;
        QSignalSpy busy(&job, &LatestJob<int>::busyChanged);
        std::atomic<bool> started{false}, sawStop{false};
        bool delivered = false;
        job.request(
            [&](const JobControl& c) {
                started = true;
                for (int i = 0; i < 5000 && !c.cancelled(); ++i) QThread::msleep(1);
                sawStop = c.cancelled();
                return 1;
            },
            [&](int) { delivered = true; });
        QTRY_VERIFY_WITH_TIMEOUT(started.load(), 5000);
        job.cancel();
        QVERIFY(!job.isBusy());
        settle(job);
        QVERIFY(sawStop.load());
        QVERIFY(!delivered);
        QCOMPARE(busy.count(), 2);  // true on request, false on cancel
        QCOMPARE(busy.at(1).at(0).toBool(), false);
    }

    // Busy lasts until the result is handled, not until the worker returns (the race that
    // MemoryView::isPlanning had): a finished worker whose result is not yet delivered is busy.
    void busyUntilDelivered() {
        LatestJob<int> job;
        bool busyDuringDelivery = true;
        int got = 0;
        job.request([](const JobControl&) { return 5; }, [&](int v) {
            got = v;
            busyDuringDelivery = job.isBusy();
        });
        job.waitForFinished();  // the worker is done, the event loop has not run
        QVERIFY(job.isBusy());
        QCOMPARE(got, 0);
        settle(job);
        QCOMPARE(got, 5);
        QVERIFY(!busyDuringDelivery);  // the receiver may start the next request from deliver
        QVERIFY(!job.isBusy());
    }

    void failureReachesFail() {
        LatestJob<int> job;
        QString error;
        bool delivered = false;
        job.request([](const JobControl&) -> int { throw std::runtime_error("planner exploded"); },
                    [&](int) { delivered = true; }, [&](const QString& e) { error = e; });
        settle(job);
        QVERIFY(!delivered);
        QCOMPARE(error, QString("planner exploded"));
        QVERIFY(!job.isBusy());
    }

    void progressOfTheNewestJob() {
        LatestJob<int> job;
        QSignalSpy range(&job, &LatestJob<int>::progressRangeChanged), value(&job, &LatestJob<int>::progressValueChanged);
        job.request(
            [](const JobControl& c) {
                c.setProgressRange(0, 4);
                for (int i = 1; i <= 4; ++i) c.setProgressValue(i);
                return 0;
            },
            [](int) {});
        settle(job);
        QVERIFY(!range.isEmpty());
        QCOMPARE(range.last().at(1).toInt(), 4);
        QVERIFY(!value.isEmpty());
        QCOMPARE(value.last().at(0).toInt(), 4);
    }

    // A request from inside deliver starts at once (nothing runs any more).
    void requestFromDeliver() {
        LatestJob<int> job;
        std::vector<int> got;
        job.request([](const JobControl&) { return 1; }, [&](int v) {
            got.push_back(v);
            job.request([](const JobControl&) { return 2; }, [&](int w) { got.push_back(w); });
        });
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), size_t(2), 5000);
        QCOMPARE(got, (std::vector<int>{1, 2}));
        QTRY_VERIFY_WITH_TIMEOUT(!job.isBusy(), 5000);
    }
};

QTEST_MAIN(LatestJobTest)
#include "test_latest_job.moc"
