// Package holds keeps the short-lived slot reservations ("holds") a browser
// takes before it books, in Redis, and publishes their changes for the
// live streams.
//
// A hold reserves one slot (start) of one appointment type with one
// specialist (and, for a type that needs one, one room or device) for one
// browser client, for a TTL (30 s by default) that
// heartbeats extend, up to a longest life counted from the claim (10 min
// by default, SetMaxLife): a hold cannot be kept for ever. Nor can it be
// renewed in place by claiming it again the moment it lapses: a hold
// claimed from an address that lapses at the end of its longest life bars
// that address's network from the same slot for a cool-off (the longest
// life by default, SetReclaimCoolOff), while anyone else may take it. Nor
// by letting it go and claiming it again: its owner's release bars the
// network from the slot until the end of the life its claim gave it. A
// hold that lapses earlier (a page closed, a laptop asleep) bars nothing:
// its patient may hold the time again at once. Three things in this
// lifecycle are easy to get almost right; this package makes them exact:
//
//   - The per-client quota, the per-address quota and the specialist's
//     other holds are checked and the slot claimed in ONE script, so twenty
//     concurrent claims by a client with quota 1 give exactly one hold (a
//     count followed by a SET may exceed it), fifty clients from one address
//     get exactly the address's quota, and two overlapping holds of
//     different types for one specialist cannot both be taken, nor two
//     overlapping holds of one room with different specialists: the claim
//     picks specialist and room as a pair (ClaimRequest.Rooms).
//   - Heartbeat, release, pin and consume each verify the owner and change
//     the hold and its indexes in ONE script, so a hold never expires or
//     changes hands between the check and the write.
//   - An expired hold is announced: an expiry index is swept (every second by
//     RunSweeper), and the sweep script removes each expired hold atomically,
//     so exactly one caller across all server instances publishes its
//     "release" event with reason "expired": no page is left showing a
//     hold that no longer exists.
//
// # Keys
//
// All keys of one clinic carry the hash tag {<clinicID>}, so every script
// touches a single hash slot (Redis Cluster-safe) and one clinic's holds are
// listed with one read. The tag is the clinic, not the appointment type:
// the slot overlay and the calendar/kiosk streams need all holds of a
// clinic (a specialist can be held through any type), and the quota
// indexes then live in the same slot as the holds they count.
//
//	hold:{c}:<atid>:<start>:<sp>   string, the hold's JSON payload, SET NX PX ttl.
//	                               Existence = the slot is held. <start> is RFC3339 UTC.
//	holds:meta:{c}                 hash holdId -> payload. Outlives the hold key until
//	                               the hold is released, consumed or swept: this is
//	                               how the sweeper still knows an expired hold.
//	holds:expiry:{c}               sorted set holdId -> expiry (unix ms). The sweep
//	                               index; heartbeats and pins move the score.
//	client:{c}:<clientId>:holds    set of the client's holdIds, the quota index;
//	                               its TTL is extended (never shortened) to the
//	                               hold's on every claim, heartbeat and pin.
//	address:{c}:<network>:holds    set of the holdIds claimed from one address (an
//	                               IPv4 address, or an IPv6 /64 as "2001:db8::/64"),
//	                               the address quota's index, pruned like the
//	                               client set; its TTL is the longest a hold can
//	                               live, renewed on every claim.
//	holds:specialist:{c}:<sp>      sorted set "holdId:occStart:occEnd" (unix ms,
//	                               the slot with its buffers) scored by occEnd:
//	                               the overlap index the claim reads. A member is
//	                               live while its holdId's expiry score is ahead;
//	                               the claim prunes dead members it reads and
//	                               those whose slots ended long ago.
//	holds:room:{c}:<resourceId>    sorted set "holdId:start:end" (unix ms, the slot
//	                               without buffers: rooms have none at the gate)
//	                               scored by end: the room's overlap index, read,
//	                               pruned and kept alive as the specialist index
//	                               is. A release, a consume or a sweep leaves the
//	                               member dead (its holdId leaves holds:expiry),
//	                               a heartbeat keeps it live, Keep extends the
//	                               index's TTL with the hold's.
//	reclaim:{c}:<atid>:<start>:<sp>:<network>
//	                               the re-claim cool-off of one slot (the hold key's
//	                               name) for one network; value = when it ends (unix
//	                               ms), the key's TTL about the same. Started by the
//	                               sweep of a lapsed hold whose payload names the
//	                               network it was claimed from (addrNet), by a
//	                               claim that meets that hold before the sweep, or
//	                               by its owner's release (until its KeepUntil). A
//	                               later end never shortens a bar that runs longer.
//	holds:clinics                  set of clinic ids that ever had a hold (never
//	                               shrinks); the sweeper iterates it. It has no tag:
//	                               it is written with a plain SADD, outside scripts,
//	                               after a claim that found the clinic unmarked.
//	holds:registered:{c}           the mark: the clinic was put in holds:clinics
//	                               within the hour (set by the claim, EX 3600).
//	ratelimit:<limit>:{c}:<who>:<window>   a caller's rate-limit count (package
//	                               ratelimit's key, under the clinic's tag), which
//	                               a claim or a heartbeat counts in its own script.
//	client_limit:{c}:<clientId>:<atid>     booking cooldown; value = booking id.
//	client_limit:booking:{c}:<bookingId>   reverse key -> the cooldown key, so a
//	                                       cancellation clears (staff's) or cuts
//	                                       (the patient's) the cooldown without SCAN.
//
// A hold's id encodes its clinic ("h" + hex(clinic uuid) + hex(10 random
// bytes)), so heartbeat and release requests, which carry only holdId and
// clientId, find the clinic's keys without a lookup (ParseHoldID).
//
// # Declared keys
//
// Redis requires every key a script touches to be passed in KEYS (that is
// what makes a script routable in a cluster). The hold key's name derives
// from the hold's payload, so operations that start from a holdId first
// read the payload from holds:meta (one HGET) to name the keys, and the
// script then re-verifies everything it relies on. The read is only a
// routing hint; a hold that changes in between is seen by the script.
//
// # Time
//
// Scripts never call TIME: "now" is passed in from Go (Store.now, which
// tests replace) and expiries are computed as now+ttl, in milliseconds.
// A hold's payload carries its KeepUntil (claim + longest life, or as far
// as the server's Keep raised it): a heartbeat extends to min(now+ttl,
// KeepUntil), and past it answers gone
// (a payload without a KeepUntil, written before it existed, counts as at
// it, so such a hold lapses within a TTL);
// a pin may reach a little past it, so a confirm is not cut off mid-insert.
// The hold key's own TTL is what decides whether a slot is held; the
// expiry scores only index holds for listing, quota and sweeping.
//
// # Events
//
// Every change is published as JSON (Event) on two channels: Channel(atid)
// for the booking page of that type and ClinicChannel(c) for the calendar
// and kiosk streams. Events carry the client id so a stream can mark a
// viewer's own holds; the SSE layer strips it before anything reaches a
// browser.
package holds
