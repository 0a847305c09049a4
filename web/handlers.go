package web

import (
	"github.com/clinic/booking/web/api"
	"github.com/clinic/booking/web/desk"
	"github.com/clinic/booking/web/feeds"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/kiosk"
	"github.com/clinic/booking/web/patient"
	"github.com/clinic/booking/web/public"
	"github.com/clinic/booking/web/records"
	"github.com/clinic/booking/web/setup"
	"github.com/clinic/booking/web/signin"
	"github.com/clinic/booking/web/stream"
	"github.com/clinic/booking/web/waitpage"
)

// handlers are the audiences' handlers, each given only the dependencies
// it uses.
type handlers struct {
	kit      *httpx.Kit
	live     *stream.Live
	pub      *public.Public
	api      *api.Endpoints
	patient  *patient.Pages
	waitpage *waitpage.WaitPages
	kiosk    *kiosk.Board
	desk     *desk.FrontDesk
	setup    *setup.Admin
	signin   *signin.SignIn
	records  *records.Records
	feeds    *feeds.Feeds
}

func newHandlers(d Deps) handlers {
	kit := httpx.New(httpx.Deps{
		Assets: d.Assets, Clinics: d.Clinics, Logger: d.Logger, PublicURL: d.PublicURL,
		Sessions: d.Sessions, Staff: d.Staff, StaffWriteLimiter: d.StaffWriteLimiter,
	}, httpx.Signer{Key: d.Secret}, httpx.NewMetrics(d.Registry))
	live := stream.New(stream.Deps{Holds: d.Holds, Hub: d.Hub, Logger: d.Logger, Slots: d.Slots, StreamMetrics: d.StreamMetrics,
		StreamsPerAddress: d.StreamsPerAddress, Registry: d.Registry})
	pub := public.New(public.Deps{
		Checkout: d.Checkout, Slots: d.Slots, Views: d.Views,
		HeartbeatHoldLimiter: d.HeartbeatHoldLimiter, HeartbeatIPLimiter: d.HeartbeatIPLimiter, MoveLinkLimiter: d.MoveLinkLimiter,
		WaitlistEmailLimiter: d.WaitlistEmailLimiter, WaitlistIPLimiter: d.WaitlistIPLimiter,
	}, kit)
	feedPages := feeds.New(feeds.Deps{Feeds: d.Feeds, Slots: d.Slots, Staff: d.Staff, IPLimiter: d.FeedIPLimiter, Limiter: d.FeedLimiter}, kit)
	return handlers{
		feeds: feedPages,
		kit:   kit, live: live, pub: pub,
		api: api.New(api.Deps{
			APIHoldLimiter: d.APIHoldLimiter, Checkout: d.Checkout, Clinics: d.Clinics, Grid: d.Grid,
			MoveLimiter: d.MoveLimiter, Practice: d.Practice, Slots: d.Slots, Verify: d.Verify, Views: d.Views, Waitlist: d.Waitlist,
		}, kit, pub),
		patient: patient.New(patient.Deps{
			Assets: d.Assets, Bookings: d.Bookings, Checkout: d.Checkout, Clinics: d.Clinics,
			FindEmailLimiter: d.FindEmailLimiter, FindIPLimiter: d.FindIPLimiter, Grid: d.Grid, HoldLimiter: d.HoldLimiter,
			Holds: d.Holds, MoveLimiter: d.MoveLimiter, Outbox: d.Outbox, Sessions: d.Sessions, Slots: d.Slots, Verify: d.Verify, Views: d.Views,
		}, kit, live, pub),
		waitpage: waitpage.New(waitpage.Deps{
			Clinics: d.Clinics, OfferLimiter: d.OfferLimiter, Sessions: d.Sessions, Slots: d.Slots, Waitlist: d.Waitlist,
		}, kit, pub),
		kiosk: kiosk.New(kiosk.Deps{Assets: d.Assets, Clinics: d.Clinics, Practice: d.Practice, Slots: d.Slots}, kit, live),
		desk: desk.New(desk.Deps{
			Access: d.Access, Assets: d.Assets, Bookings: d.Bookings, Clinics: d.Clinics, Desk: d.Desk, Holds: d.Holds,
			Logger: d.Logger, Outbox: d.Outbox, Sessions: d.Sessions, Slots: d.Slots, Staff: d.Staff,
			StaffBookings: d.StaffBookings, Waitlist: d.Waitlist, Series: d.Series,
		}, kit, live),
		setup: setup.New(setup.Deps{
			Assets: d.Assets, Clinics: d.Clinics, Holds: d.Holds, Logger: d.Logger, Practice: d.Practice,
			Sessions: d.Sessions, Slots: d.Slots, Staff: d.Staff, SetupChanges: d.SetupChanges,
			StaffBookings: d.StaffBookings, Access: d.Access,
			FeedBlock: feedPages.SpecialistBlock, NamesBlock: feedPages.NamesBlock,
		}, kit),
		records: records.New(records.Deps{
			Access: d.Access, Clinics: d.Clinics, Outbox: d.Outbox, PatientExport: d.PatientExport, Privacy: d.Privacy,
			Sessions: d.Sessions, Slots: d.Slots, Staff: d.Staff,
		}, kit),
		signin: signin.New(signin.Deps{
			Clinics: d.Clinics, LoginAccountLimiter: d.LoginAccountLimiter, LoginDeviceLimiter: d.LoginDeviceLimiter,
			CodeAccountLimiter: d.CodeAccountLimiter, LoginIPLimiter: d.LoginIPLimiter, Sessions: d.Sessions, Staff: d.Staff,
			FeedBlock: feedPages.OwnBlock,
		}, kit),
	}
}
