-- +goose Up
-- A third role: reception runs the calendar and the bookings only (what
-- each role may do is stated in internal/staff/roles.go).
ALTER TABLE staff_users DROP CONSTRAINT staff_users_role_check;
ALTER TABLE staff_users ADD CONSTRAINT staff_users_role_check
    CHECK (role IN ('admin', 'staff', 'reception'));

-- +goose Down
-- Without the role, a reception account becomes a disabled staff account:
-- it keeps its audit trail and cannot sign in until an admin enables it
-- (as staff, with the rights that brings).
UPDATE staff_users SET role = 'staff', disabled_at = coalesce(disabled_at, now())
    WHERE role = 'reception';
ALTER TABLE staff_users DROP CONSTRAINT staff_users_role_check;
ALTER TABLE staff_users ADD CONSTRAINT staff_users_role_check
    CHECK (role IN ('admin', 'staff'));
