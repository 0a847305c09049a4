package web

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/clinic/booking/web/httpx"
)

// routes lists every route in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{}))
	e.Use(s.kit.RequestLogger)
	e.Use(s.kit.Recoverer)
	e.Use(httpx.SecurityHeaders)
	// Forms and JSON are small; anything bigger is refused before it is read.
	e.Use(middleware.BodyLimit("256K"))
	e.Use(httpx.TextOnly)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	if s.deps.MetricsPublic {
		// Only when asked for: otherwise on METRICS_ADDR only (see listenMetrics).
		e.GET("/metrics", echo.WrapHandler(s.metricsHandler()))
	}

	e.GET("/static/*", s.deps.Assets.Serve)

	// A calendar subscription: no session, the secret address is the key.
	e.GET("/calendar/:file", s.feeds.Serve)

	e.GET("/kiosk/:slug", s.kiosk.Kiosk)
	e.GET("/kiosk/:slug/live", s.kiosk.KioskStream)

	s.patientRoutes(e.Group("", s.kit.Sessions))
	s.staffRoutes(e)
	s.apiRoutes(e)
}

// patientRoutes are the patients' pages: a clinic, its booking pages,
// "find my booking" and the manage links.
func (s *Server) patientRoutes(pages *echo.Group) {
	pages.GET("/", s.patient.Home)
	pages.GET("/c/:slug", s.patient.ClinicPage)
	pages.GET("/c/:slug/find", s.patient.FindPage)
	pages.GET("/c/:slug/privacy", s.patient.PrivacyPage)
	pages.POST("/c/:slug/find", s.patient.FindRequest)
	pages.GET("/find", s.patient.FindChooser)
	pages.GET("/c/:slug/book/:typeId", s.patient.BookingPage)
	pages.GET("/c/:slug/book/:typeId/live", s.patient.BookingStream)
	pages.POST("/c/:slug/book/:typeId/hold", s.patient.HoldSlot)
	pages.POST("/c/:slug/book/:typeId/heartbeat", s.patient.Heartbeat)
	pages.POST("/c/:slug/book/:typeId/release", s.patient.Release)
	pages.POST("/c/:slug/book/:typeId/confirm", s.patient.Confirm)
	pages.GET("/manage/:token", s.patient.ManagePage, s.patient.ManageMissing)
	pages.GET("/manage/:token/cancel", s.patient.ManageCancelPage, s.patient.ManageMissing)
	pages.POST("/manage/:token/cancel", s.patient.ManageCancel)
	pages.GET("/manage/:token/calendar.ics", s.patient.ManageICS)
	pages.GET("/manage/:token/reschedule", s.patient.ManageReschedulePage, s.patient.ManageMissing)
	pages.GET("/manage/:token/reschedule/live", s.patient.ManageRescheduleStream)
	pages.POST("/manage/:token/reschedule", s.patient.ManageReschedule)
	// The waitlist: joining, a place on the list, the offers of a freed time.
	pages.GET("/c/:slug/book/:typeId/waitlist", s.waitpage.JoinWaitlistPage)
	pages.POST("/c/:slug/book/:typeId/waitlist", s.waitpage.JoinWaitlist)
	pages.GET("/c/:slug/waitlist/:token", s.waitpage.WaitPlacePage)
	pages.POST("/c/:slug/waitlist/:token/confirm", s.waitpage.ConfirmWaitPlace)
	pages.POST("/c/:slug/waitlist/:token/leave", s.waitpage.LeaveWaitlist)
	pages.GET("/c/:slug/offer/:token", s.waitpage.TimeOfferPage)
	pages.POST("/c/:slug/offer/:token/accept", s.waitpage.AcceptOffer)
	pages.POST("/c/:slug/offer/:token/decline", s.waitpage.DeclineOffer)
}

// staffRoutes are the staff pages and their JSON API.
func (s *Server) staffRoutes(e *echo.Echo) {
	// Staff: sign-in first, then the session's CSRF token on every state
	// change, then the account's allowance of changes. The sign-in form
	// checks its own token (a signed double submit: no session before
	// sign-in).
	sg := e.Group("/staff", s.kit.Sessions, httpx.SpeakStaff)
	sg.GET("/login", s.signin.LoginPage)
	sg.POST("/login", s.signin.Login)
	sg.GET("/login/code", s.signin.LoginCodePage)
	sg.POST("/login/code", s.signin.LoginCode)
	sg.GET("/welcome/:token", s.signin.WelcomePage)
	sg.POST("/welcome/:token", s.signin.Welcome)
	st := sg.Group("", s.kit.RequireStaff, s.kit.CSRF, s.kit.LimitStaffWrites, s.records.OutboxNav)
	st.POST("/logout", s.signin.Logout)
	st.GET("", s.desk.Calendar)
	st.GET("/live", s.desk.CalendarStream)
	st.GET("/day", s.desk.StaffDay)
	st.GET("/day/live", s.desk.StaffGridLive(false))
	st.GET("/week", s.desk.StaffWeek)
	st.GET("/week/live", s.desk.StaffGridLive(true))
	st.POST("/bookings", s.desk.PhoneBooking)
	st.GET("/bookings/search", s.desk.BookingSearch)
	st.GET("/bookings/:id", s.desk.StaffBookingPage)
	st.POST("/bookings/:id/cancel", s.desk.StaffCancel)
	st.POST("/bookings/:id/reschedule", s.desk.StaffReschedule)
	st.GET("/bookings/:id/move", s.desk.DeskMove)
	st.GET("/bookings/:id/dialog", s.desk.BookingDialog)
	st.POST("/bookings/:id/attendance", s.desk.MarkAttendance)
	st.GET("/day/sheet", s.desk.DaySheet)
	st.POST("/desk/new", s.desk.DeskNew)
	st.POST("/desk/heartbeat", s.desk.DeskHeartbeat)
	st.POST("/desk/release", s.desk.DeskRelease)
	st.POST("/desk/book", s.desk.DeskBook)
	st.GET("/desk/noshows", s.desk.DeskNoShows)
	st.GET("/desk/patients", s.desk.DeskPatients)
	st.GET("/specialists", s.setup.SpecialistList)
	st.POST("/specialists", s.setup.SpecialistCreate)
	st.GET("/specialists/:id", s.setup.SpecialistPage)
	st.POST("/specialists/:id", s.setup.SpecialistUpdate)
	st.POST("/specialists/:id/hours", s.setup.HoursUpdate)
	st.POST("/specialists/:id/overrides", s.setup.OverrideCreate)
	st.POST("/overrides/:id/delete", s.setup.OverrideDelete)
	st.GET("/closures", s.setup.ClosuresPage)
	st.POST("/closures", s.setup.ClosureCreate)
	st.GET("/closures/:id", s.setup.ClosurePage)
	st.POST("/closures/:id/delete", s.setup.ClosureDelete)
	st.POST("/closures/:id/cancel", s.setup.ClosureCancel)
	s.roomRoutes(st)
	st.GET("/holidays", s.setup.HolidaysPage)
	st.POST("/holidays", s.setup.HolidaysSave)
	st.POST("/specialists/:id/feed", s.feeds.SpecialistFeed)
	st.POST("/specialists/:id/feed/link", s.feeds.SpecialistLink)
	st.POST("/account/feed", s.feeds.OwnFeed)
	st.POST("/settings/feeds", s.feeds.NamesSave)
	st.GET("/types", s.setup.TypeList)
	st.GET("/types/new", s.setup.TypeNew)
	st.POST("/types", s.setup.TypeSave)
	st.GET("/types/:id", s.setup.TypePage)
	st.POST("/types/:id", s.setup.TypeSave)
	st.GET("/audit", s.records.AuditPage)
	st.GET("/patients/export", s.records.PatientExport)
	st.GET("/users", s.setup.UsersPage)
	st.POST("/users", s.setup.UserCreate)
	st.POST("/users/access", s.setup.UserAccess)
	st.POST("/users/link", s.setup.UserLink)
	st.POST("/users/role", s.setup.UserRole)
	st.GET("/users/:id/access", s.records.AccessStaff)
	st.GET("/access", s.records.AccessPatient)
	st.POST("/users/second-factor/reset", s.setup.UserSecondFactorReset)
	st.POST("/users/second-factor/require", s.setup.UserSecondFactorRequire)
	st.GET("/account", s.signin.AccountPage)
	st.POST("/account", s.signin.AccountChange)
	st.GET("/account/second-factor", s.signin.SecondFactorPage)
	st.POST("/account/second-factor", s.signin.SecondFactorConfirm)
	st.POST("/account/sessions/end", s.signin.SessionEnd)
	st.POST("/account/sessions/end-others", s.signin.SessionsEndOthers)
	st.GET("/kiosks", s.setup.KiosksPage)
	st.GET("/settings", s.setup.SettingsPage)
	st.POST("/settings", s.setup.SettingsSave)
	st.POST("/kiosks", s.setup.KioskCreate)
	st.POST("/kiosks/revoke", s.setup.KioskRevoke)
	st.POST("/kiosks/language", s.setup.KioskLanguage)
	st.GET("/patients", s.records.PatientsPage)
	st.POST("/patients/erase", s.records.PatientErase)
	s.outboxRoutes(st)
	st.GET("/waitlist", s.desk.WaitlistPage)
	st.POST("/waitlist/:id/remove", s.desk.WaitlistRemove)
	st.GET("/waitlist/:id/offer", s.desk.WaitlistOfferPage)
	st.POST("/waitlist/:id/offer", s.desk.WaitlistOffer)

	api := e.Group("/v1/staff", s.kit.Sessions, s.kit.RequireStaff, s.kit.CSRF, s.kit.LimitStaffWrites)
	api.GET("/specialists/:id", s.api.Specialist)
	api.PATCH("/specialists/:id", s.api.SpecialistUpdate)
	api.PUT("/specialists/:id/hours", s.api.Hours)
}

// outboxRoutes are the staff's pages of the e-mails held back by the cap
// on one address, and of those kept without a mail server.
func (s *Server) outboxRoutes(st *echo.Group) {
	st.GET("/outbox", s.records.OutboxPage)
	st.GET("/outbox/:id", s.records.OutboxMessage)
	st.GET("/outbox/:id/message.html", s.records.OutboxHTML)
	st.GET("/outbox/:id/message.eml", s.records.OutboxEML)
	st.GET("/outbox/:id/calendar.ics", s.records.OutboxICS)
	st.POST("/outbox/held/:id/send", s.records.OutboxSendHeld)
}

// roomRoutes are the staff's pages of the clinic's rooms and devices and
// of what each appointment type needs.
func (s *Server) roomRoutes(st *echo.Group) {
	st.GET("/rooms", s.setup.RoomsPage)
	st.POST("/rooms", s.setup.RoomCreate)
	st.POST("/rooms/needs", s.setup.RoomNeed)
	st.GET("/rooms/:id", s.setup.RoomPage)
	st.POST("/rooms/:id", s.setup.RoomUpdate)
	st.POST("/rooms/:id/hours", s.setup.RoomHours)
	st.POST("/rooms/:id/closures", s.setup.RoomClosureCreate)
	st.POST("/rooms/:id/closures/:closure/delete", s.setup.RoomClosureDelete)
}

// apiRoutes are the public JSON API: types, times, holds, appointments.
func (s *Server) apiRoutes(e *echo.Echo) {
	v1 := e.Group("/v1")
	v1.GET("/clinics/:slug/appointment-types", s.api.ClinicAppointmentTypes)
	v1.GET("/appointment-types/:id/timeslots", s.api.Timeslots)
	v1.GET("/holds/stream", s.live.HoldStream)
	v1.POST("/holds", s.api.CreateHold)
	v1.PATCH("/holds", s.api.HeartbeatHold)
	v1.DELETE("/holds/:holdId", s.api.ReleaseHold)
	v1.POST("/appointment-types/:id/book", s.api.Book)
	v1.POST("/verifications", s.api.Verify)
	v1.GET("/appointments/:id", s.api.GetAppointment)
	v1.DELETE("/appointments/:id", s.api.CancelAppointment)
	v1.PATCH("/appointments/:id", s.api.RescheduleAppointment)
	v1.POST("/appointment-types/:id/waitlist", s.api.JoinWaitlist)
}
