import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type ApiKeyRole = 'admin' | 'member';

@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'workspace_id', type: 'uuid' })
  workspaceId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'key_hash', type: 'bytea' })
  keyHash!: Buffer;

  @Column({ type: 'text' })
  prefix!: string;

  @Column({ type: 'text' })
  role!: ApiKeyRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;
}
