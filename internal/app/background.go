package app

import (
	"context"
	"runtime"
	"time"
)

// RunBackground runs the work every instance does besides answering
// requests, until ctx ends: the hold expiry sweeper (each second) and the
// removal of day-old idempotency records (each hour).
func (a *App) RunBackground(ctx context.Context) {
	d := a.Deps
	a.runOutbox(ctx)
	go d.Hub.Run(ctx)
	go a.watchLoad(ctx, 30*time.Second)
	go d.Holds.RunSweeper(ctx, time.Second)
	go func() {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			if n, err := d.Idempotency.DeleteExpired(ctx); err != nil && ctx.Err() == nil {
				d.Logger.Warn("delete expired idempotency keys", "err", err)
			} else if n > 0 {
				d.Logger.Info("deleted expired idempotency keys", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// watchLoad warns when the heap or the number of open streams passes its
// threshold: the operator should add an instance before the process is in
// trouble.
func (a *App) watchLoad(ctx context.Context, every time.Duration) {
	d := a.Deps
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > a.warnHeap {
			d.Logger.Warn("heap above threshold", "heap_mb", ms.HeapAlloc>>20, "threshold_mb", a.warnHeap>>20)
		}
		open := 0
		for _, n := range d.Hub.Counts() {
			open += n
		}
		if open > a.warnStreams {
			d.Logger.Warn("open streams above threshold", "streams", open, "threshold", a.warnStreams)
		}
	}
}

// runOutbox sends e-mails and works the waitlist's jobs and the daily
// retention run until ctx ends, then lets the sends under way finish (for
// up to 10 s). A send cut short is retried by the queue.
func (a *App) runOutbox(ctx context.Context) {
	d := a.Deps
	if err := d.Outbox.Start(context.WithoutCancel(ctx), d.Waitlist.Jobs(), a.Retention.Jobs()); err != nil {
		d.Logger.Error("outbox not started; e-mails wait in the queue", "err", err)
		return
	}
	go func() {
		<-ctx.Done()
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Outbox.Stop(stop); err != nil {
			d.Logger.Warn("outbox stop", "err", err)
		}
	}()
}
