package web

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes lists every route in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{}))
	e.Use(s.requestLogger)
	e.Use(s.recoverer)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.deps.Registry, promhttp.HandlerOpts{})))

	e.GET("/static/*", s.deps.Assets.serve)

	e.GET("/kiosk/:slug", s.kiosk)
	e.GET("/kiosk/:slug/live", s.kioskStream)

	pages := e.Group("", s.sessions)
	pages.GET("/", s.home)
	pages.GET("/c/:slug", s.clinicPage)
	pages.GET("/c/:slug/book/:typeId", s.bookingPage)
	pages.GET("/c/:slug/book/:typeId/live", s.bookingStream)
	pages.POST("/c/:slug/book/:typeId/hold", s.holdSlot)
	pages.POST("/c/:slug/book/:typeId/heartbeat", s.heartbeat)
	pages.POST("/c/:slug/book/:typeId/release", s.release)
	pages.POST("/c/:slug/book/:typeId/confirm", s.confirm)
	pages.GET("/manage/:token", s.managePage)
	pages.POST("/manage/:token/cancel", s.manageCancel)
	pages.GET("/manage/:token/calendar.ics", s.manageICS)
	pages.GET("/manage/:token/reschedule", s.manageReschedulePage)
	pages.GET("/manage/:token/reschedule/live", s.manageRescheduleStream)
	pages.POST("/manage/:token/reschedule", s.manageReschedule)

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
}
