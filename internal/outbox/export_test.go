package outbox

import "time"

// SetRecordFor shortens how long a send insists on recording its
// acceptance, for a test of the give-up path.
func SetRecordFor(o *Outbox, d time.Duration) { o.recordFor = d }

// WorkQueue is the queue of the jobs of others (InsertJob's).
func WorkQueue(o *Outbox) string { return o.workQueue() }
