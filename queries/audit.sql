-- name: AuditInsert :exec
INSERT INTO audit_log (clinic_id, actor, action, entity, entity_id, before, after, reason)
VALUES (@clinic_id, @actor, @action, @entity, @entity_id, @before, @after, @reason);

-- name: AuditListByEntity :many
SELECT * FROM audit_log WHERE entity = @entity AND entity_id = @entity_id ORDER BY id;

-- name: AuditCountByClinic :one
SELECT count(*) FROM audit_log WHERE clinic_id = @clinic_id;

-- name: AuditList :many
SELECT * FROM audit_log
WHERE clinic_id = @clinic_id
  AND (@entity::text = '' OR entity = @entity)
  AND (@actor::text = '' OR actor = @actor)
  AND at >= @from_at AND at < @to_at
ORDER BY at DESC, id DESC
LIMIT @page_size OFFSET @page_offset;
