package holds

// Publishing hold events on pub/sub.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Publish sends an event, as JSON, on both the type's and the clinic's
// channel (one round trip). Events without a type or clinic id cannot be
// routed and are refused.
func (s *Store) Publish(ctx context.Context, ev Event) error {
	if ev.Type == "" || ev.ClinicID == uuid.Nil {
		return fmt.Errorf("%w: event needs a type and a clinic id", ErrInvalid)
	}
	msg, channels, err := eventMessage(ev)
	if err != nil {
		return err
	}
	_, err = s.publisher(ctx, ev.ClinicID).Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, ch := range channels {
			p.Publish(ctx, ch, msg)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("holds: publish %s: %w", ev.Type, err)
	}
	return nil
}

// publisher is where a clinic's events are published. On a Redis Cluster
// every node passes a message on to the subscribers of every other, and
// go-redis would pick one at random: the master of the clinic's own keys is
// chosen instead, so a clinic whose holds work has its events delivered
// while another master is down.
func (s *Store) publisher(ctx context.Context, clinicID uuid.UUID) redis.Cmdable {
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		if node, err := cc.MasterForKey(ctx, tag(clinicID)); err == nil {
			return node
		}
	}
	return s.rdb
}

// eventMessage is an event as published, and the channels it goes to: its
// type's (when it has one) and its clinic's.
func eventMessage(ev Event) ([]byte, []string, error) {
	msg, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, fmt.Errorf("holds: encode event: %w", err)
	}
	channels := make([]string, 0, 2)
	if ev.AppointmentTypeID != uuid.Nil {
		channels = append(channels, Channel(ev.AppointmentTypeID))
	}
	return msg, append(channels, ClinicChannel(ev.ClinicID)), nil
}

// publishOrLog publishes after a state change that already happened in
// Redis: failing the request then would misreport the change, so a lost
// event is logged (streams resync from their snapshot on reconnect).
func (s *Store) publishOrLog(ctx context.Context, ev Event) {
	if err := s.Publish(ctx, ev); err != nil {
		s.log.Warn("publish hold event", "type", ev.Type, "holdId", ev.HoldID, "err", err)
	}
}
