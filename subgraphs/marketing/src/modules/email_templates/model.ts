import { addPositions, DATE_TIME_SCHEMA, modelOn, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** An e-mail template: MJML (kept as written and compiled), a plain-text alternative, a subject; merge fields in Liquid. */
export interface EmailTemplateDoc {
  _id: string;
  workspace: string;
  name: string;
  name_lc: string;
  subject: string;
  mjml: string;
  /** The MJML compiled to HTML when saved (merge fields still in it, filled per recipient). */
  html: string;
  text: string;
  /** Raised on every update; a campaign keeps the version it was sent with. */
  version: number;
  created_at: Date;
  updated_at: Date;
}

const templateSchema = new Schema<EmailTemplateDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true },
  name: String, name_lc: String, subject: String, mjml: String, html: String, text: String, version: Number, created_at: Date, updated_at: Date,
}, { versionKey: false });
addPositions(templateSchema);

/** The email_templates collection. */
export function emailTemplates(db: Connection): Model<EmailTemplateDoc> {
  return modelOn<EmailTemplateDoc>(db, 'EmailTemplate', templateSchema, 'email_templates');
}

/** JSON Schema of {@link templateView}. */
export const TEMPLATE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'name', 'subject', 'mjml', 'text', 'version', 'created_at', 'updated_at'],
  properties: { id: TEXT, name: TEXT, subject: TEXT, mjml: TEXT, text: TEXT, version: { type: 'integer' }, created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA },
} as const;

/** The public shape of a template. */
export function templateView(t: EmailTemplateDoc) {
  return { id: t._id, name: t.name, subject: t.subject, mjml: t.mjml, text: t.text, version: t.version, created_at: t.created_at.toISOString(), updated_at: t.updated_at.toISOString() };
}

/** The Spanish defaults a new template starts from: a greeting, the body, and the unsubscribe link every campaign carries. */
export const DEFAULT_TEMPLATE = {
  subject: 'Novedades de {{ sender.name }}',
  mjml: `<mjml lang="es">
  <mj-body>
    <mj-section>
      <mj-column>
        <mj-text font-size="16px">Hola {{ party.first_name }}:</mj-text>
        <mj-text>Tenemos novedades para ti.</mj-text>
        <mj-text font-size="12px" color="#555555">Recibes este correo porque autorizaste a {{ sender.name }} a escribirte. <a href="{{ unsubscribe_url }}">Cancelar la suscripción</a>.</mj-text>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`,
  text: 'Hola {{ party.first_name }}:\n\nTenemos novedades para ti.\n\nRecibes este correo porque autorizaste a {{ sender.name }} a escribirte. Para no recibir más: {{ unsubscribe_url }}\n',
};
