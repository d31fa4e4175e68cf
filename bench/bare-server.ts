// Baseline (c) of the invoke bench: a bare express handler doing the same mongoose query as
// parties.list, with no GraphQL, no credential check and no validation.
import express from 'express';
import { connectDatabase } from '../shared/src/db.ts';
import { parties, partyView } from '../subgraphs/crm/src/modules/parties/model.ts';

const db = await connectDatabase(process.env.MONGO_URL!, process.env.MONGO_DB!);
const app = express();
app.use(express.json());
app.post('/parties', async (req, res) => {
  const workspace = req.header('x-workspace')!;
  const limit = (req.body as { limit?: number }).limit ?? 20;
  const filter = { workspace };
  const model = parties(db);
  const [rows, total] = await Promise.all([
    model.find(filter).sort({ created_at: -1, _id: -1 }).limit(limit).lean(),
    model.countDocuments(filter),
  ]);
  res.json({ tool: 'parties.list', output: { rows: rows.map(partyView), total } });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('READY\n'));
server.keepAliveTimeout = 65_000;
