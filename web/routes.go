package web

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// routes lists every route in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{}))
	e.Use(s.requestLogger)
	e.Use(s.recoverer)
	e.Use(securityHeaders)
	// Forms and JSON are small; anything bigger is refused before it is read.
	e.Use(middleware.BodyLimit("256K"))
	e.Use(textOnly)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	if s.deps.MetricsAddr == "" {
		// Otherwise served on the private METRICS_ADDR only (see serveMetrics).
		e.GET("/metrics", echo.WrapHandler(s.metricsHandler()))
	}

	e.GET("/static/*", s.deps.Assets.serve)

	e.GET("/kiosk/:slug", s.kiosk)
	e.GET("/kiosk/:slug/live", s.kioskStream)

	s.patientRoutes(e.Group("", s.sessions))
	s.staffRoutes(e)
	s.apiRoutes(e)
}

// patientRoutes are the patients' pages: a clinic, its booking pages,
// "find my booking" and the manage links.
func (s *Server) patientRoutes(pages *echo.Group) {
	pages.GET("/", s.home)
	pages.GET("/c/:slug", s.clinicPage)
	pages.GET("/c/:slug/find", s.findPage)
	pages.POST("/c/:slug/find", s.findRequest)
	pages.GET("/find", s.findChooser)
	pages.GET("/c/:slug/book/:typeId", s.bookingPage)
	pages.GET("/c/:slug/book/:typeId/live", s.bookingStream)
	pages.POST("/c/:slug/book/:typeId/hold", s.holdSlot)
	pages.POST("/c/:slug/book/:typeId/heartbeat", s.heartbeat)
	pages.POST("/c/:slug/book/:typeId/release", s.release)
	pages.POST("/c/:slug/book/:typeId/confirm", s.confirm)
	pages.GET("/manage/:token", s.managePage, s.manageMissing)
	pages.POST("/manage/:token/cancel", s.manageCancel)
	pages.GET("/manage/:token/calendar.ics", s.manageICS)
	pages.GET("/manage/:token/reschedule", s.manageReschedulePage, s.manageMissing)
	pages.GET("/manage/:token/reschedule/live", s.manageRescheduleStream)
	pages.POST("/manage/:token/reschedule", s.manageReschedule)
	s.waitlistRoutes(pages)
}

// staffRoutes are the staff pages and their JSON API.
func (s *Server) staffRoutes(e *echo.Echo) {
	// Staff: sign-in first, then the session's CSRF token on every state
	// change, then the account's allowance of changes. The sign-in form
	// checks its own token (a signed double submit: no session before
	// sign-in).
	sg := e.Group("/staff", s.sessions)
	sg.GET("/login", s.loginPage)
	sg.POST("/login", s.login)
	sg.GET("/welcome/:token", s.welcomePage)
	sg.POST("/welcome/:token", s.welcome)
	st := sg.Group("", s.requireStaff, s.csrf, s.limitStaffWrites, s.outboxNav)
	st.POST("/logout", s.logout)
	st.GET("", s.calendar)
	st.GET("/live", s.calendarStream)
	st.GET("/day", s.staffDay)
	st.GET("/day/live", s.staffGridLive(false))
	st.GET("/week", s.staffWeek)
	st.GET("/week/live", s.staffGridLive(true))
	st.POST("/bookings", s.phoneBooking)
	st.GET("/bookings/search", s.bookingSearch)
	st.GET("/bookings/:id", s.staffBookingPage)
	st.POST("/bookings/:id/cancel", s.staffCancel)
	st.POST("/bookings/:id/reschedule", s.staffReschedule)
	st.GET("/bookings/:id/move", s.deskMove)
	st.GET("/bookings/:id/dialog", s.bookingDialog)
	st.POST("/bookings/:id/attendance", s.markAttendance)
	st.GET("/day/sheet", s.daySheet)
	st.POST("/desk/new", s.deskNew)
	st.POST("/desk/heartbeat", s.deskHeartbeat)
	st.POST("/desk/release", s.deskRelease)
	st.POST("/desk/book", s.deskBook)
	st.GET("/desk/noshows", s.deskNoShows)
	st.GET("/specialists", s.specialistList)
	st.POST("/specialists", s.specialistCreate)
	st.GET("/specialists/:id", s.specialistPage)
	st.POST("/specialists/:id", s.specialistUpdate)
	st.POST("/specialists/:id/hours", s.hoursUpdate)
	st.POST("/specialists/:id/overrides", s.overrideCreate)
	st.POST("/overrides/:id/delete", s.overrideDelete)
	st.GET("/types", s.typeList)
	st.GET("/types/new", s.typeNew)
	st.POST("/types", s.typeSave)
	st.GET("/types/:id", s.typePage)
	st.POST("/types/:id", s.typeSave)
	st.GET("/audit", s.auditPage)
	st.GET("/users", s.usersPage)
	st.POST("/users", s.userCreate)
	st.POST("/users/access", s.userAccess)
	st.POST("/users/link", s.userLink)
	st.GET("/account", s.accountPage)
	st.POST("/account", s.accountChange)
	st.GET("/kiosks", s.kiosksPage)
	st.GET("/settings", s.settingsPage)
	st.POST("/settings", s.settingsSave)
	st.POST("/kiosks", s.kioskCreate)
	st.POST("/kiosks/revoke", s.kioskRevoke)
	s.outboxRoutes(st)
	s.staffWaitlistRoutes(st)

	api := e.Group("/v1/staff", s.sessions, s.requireStaff, s.csrf, s.limitStaffWrites)
	api.GET("/specialists/:id", s.apiSpecialist)
	api.PATCH("/specialists/:id", s.apiSpecialistUpdate)
	api.PUT("/specialists/:id/hours", s.apiHours)
}

// outboxRoutes are the staff's pages of the e-mails kept without a mail
// server.
func (s *Server) outboxRoutes(st *echo.Group) {
	st.GET("/outbox", s.outboxPage)
	st.GET("/outbox/:id", s.outboxMessage)
	st.GET("/outbox/:id/message.html", s.outboxHTML)
	st.GET("/outbox/:id/message.eml", s.outboxEML)
	st.GET("/outbox/:id/calendar.ics", s.outboxICS)
}

// apiRoutes are the public JSON API: types, times, holds, appointments.
func (s *Server) apiRoutes(e *echo.Echo) {
	v1 := e.Group("/v1")
	v1.GET("/clinics/:slug/appointment-types", s.clinicAppointmentTypes)
	v1.GET("/appointment-types/:id/timeslots", s.timeslots)
	v1.GET("/holds/stream", s.holdStream)
	v1.POST("/holds", s.createHold)
	v1.PATCH("/holds", s.heartbeatHold)
	v1.DELETE("/holds/:holdId", s.releaseHold)
	v1.POST("/appointment-types/:id/book", s.book)
	v1.GET("/appointments/:id", s.getAppointment)
	v1.DELETE("/appointments/:id", s.cancelAppointment)
	v1.PATCH("/appointments/:id", s.rescheduleAppointment)
	v1.POST("/appointment-types/:id/waitlist", s.apiJoinWaitlist)
}
