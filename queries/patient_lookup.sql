-- name: BookingPatientLookup :many
-- The patients the clinic has booked whose name holds @name_part, or whose
-- phone's digits hold @digits (when not empty): one row per name, e-mail
-- and phone as typed, the one booked most recently first, with the id of
-- their latest booking (what the look-up showed, for the record of
-- reads). Erased patients have no name and are never offered.
SELECT id, patient_name, patient_email, patient_phone
FROM (
    SELECT DISTINCT ON (lower(b.patient_name), lower(b.patient_email), b.patient_phone)
           b.id, b.patient_name, b.patient_email, b.patient_phone, b.created_at
    FROM bookings b
    WHERE b.clinic_id = @clinic_id AND b.patient_name <> ''
      AND ((@name_part::text <> '' AND b.patient_name ILIKE '%' || @name_part::text || '%')
           OR (@digits::text <> '' AND regexp_replace(b.patient_phone, '\D', '', 'g') LIKE '%' || @digits::text || '%'))
    ORDER BY lower(b.patient_name), lower(b.patient_email), b.patient_phone, b.created_at DESC
) p
ORDER BY created_at DESC
LIMIT @max_rows;
